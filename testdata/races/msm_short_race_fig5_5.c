/* verdict: race
 * racy: GLOB
 * figure: dissertation fig. 5.5
 * needs: lib
 * expect-exit: 0
 */
/* Fig. 5.5 (sleeps scaled to 20 ms/40 ms, printf(GLOB) replaced by an
 * unprinted read). Main's write at "line 8" and the worker's read at
 * "line 25" are unordered; so are main's unlocked GLOB++ at "line 17"
 * (after the wait) and the worker's read at "line 33" (after its signal).
 * MSM-short reports after one unsynchronised access; MSM-long misses it
 * because the race happens only once. */
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

    consume(GLOB);              /* line 25 */

    pthread_mutex_lock(&l);
    COND++;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&l);
    usleep(40000);

    consume(GLOB);              /* line 33 */
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

    GLOB++;                     /* line 17 */

    pthread_join(threadid, NULL);
    puts("msm_short_race_fig5_5: done");
    return 0;
}
