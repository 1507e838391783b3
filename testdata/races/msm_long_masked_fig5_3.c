/* verdict: race
 * racy: GLOB
 * figure: dissertation fig. 5.3
 * needs: lib
 * known-miss: MSM-long as the dissertation defines it (table 5.2 counts the report as a false positive)
 * expect-exit: 0
 */
/* Fig. 5.3 as printed (sleeps scaled to 20 ms/40 ms, printf(GLOB) replaced
 * by an unprinted read). The dissertation presents this as a false positive
 * that MSM-long avoids ("the read operations at the end are in parallel").
 * Under the C11/pthreads model it is a real race: main's unlocked read of
 * GLOB at "line 13" and the worker's locked GLOB++ at "line 22" are ordered
 * only by the sleeps: main never acquires l after the worker's unlock and
 * the worker never synchronises with main after that. MSM-short reports
 * it. For the race-free variant the figure intends, see
 * locked_writes_then_parallel_reads.c. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

int GLOB = 0;
pthread_mutex_t l = PTHREAD_MUTEX_INITIALIZER;

static void consume(int v) { __asm__ __volatile__("" : : "r"(v)); }

static void *worker(void *arg)
{
    (void)arg;
    usleep(20000);

    pthread_mutex_lock(&l);
    GLOB++;                     /* line 22 */
    pthread_mutex_unlock(&l);

    usleep(40000);

    consume(GLOB);              /* line 27 */
    return NULL;
}

int main(void)
{
    pthread_t threadid;
    pthread_create(&threadid, NULL, worker, NULL);

    pthread_mutex_lock(&l);
    GLOB = 1;                   /* line 8 */
    pthread_mutex_unlock(&l);

    usleep(20000);

    consume(GLOB);              /* line 13 */

    pthread_join(threadid, NULL);
    puts("msm_long_masked_fig5_3: done");
    return 0;
}
