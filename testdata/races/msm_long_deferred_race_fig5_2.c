/* verdict: race
 * racy: GLOB
 * figure: dissertation fig. 5.2
 * needs: lib
 * expect-exit: 0
 */
/* Fig. 5.2 (sleep(2000)/sleep(4000) scaled to 20 ms/40 ms; printf(GLOB)
 * replaced by a read whose value is not printed). The sleeps force the
 * order of table 5.1. GLOB races twice: main's write at "line 8" with the
 * worker's read at "line 29" (nothing orders them), and main's unlocked
 * GLOB++ at "line 21" with the worker's write at "line 37" (both come after
 * the signal; no synchronisation between them). MSM-long reports at the
 * second race, MSM-short at the first. COND is always accessed under l. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

int GLOB = 0;
int COND = 0;
pthread_mutex_t l = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

static void consume(int v) { __asm__ __volatile__("" : : "r"(v)); }

static void *worker(void *arg)
{
    (void)arg;
    usleep(20000);

    consume(GLOB);              /* line 29 */

    pthread_mutex_lock(&l);
    COND++;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&l);
    usleep(40000);

    GLOB = 4;                   /* line 37 */
    consume(GLOB);
    return NULL;
}

int main(void)
{
    pthread_t threadid;
    pthread_create(&threadid, NULL, worker, NULL);

    GLOB = 1;                   /* line 8 */
    consume(GLOB);

    pthread_mutex_lock(&l);
    while (COND != 1)
        pthread_cond_wait(&cv, &l);
    pthread_mutex_unlock(&l);

    pthread_mutex_lock(&l);
    GLOB++;                     /* line 18 */
    pthread_mutex_unlock(&l);

    GLOB++;                     /* line 21 */

    pthread_join(threadid, NULL);
    puts("msm_long_deferred_race_fig5_2: done");
    return 0;
}
