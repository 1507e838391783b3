/* verdict: race
 * racy: GLOB
 * figure: dissertation fig. 3.7
 * needs: lib
 * expect-exit: 0
 */
/* Fig. 3.7: main writes and reads GLOB without a lock after creating the
 * worker; the worker increments it under lock l. The main thread's
 * accesses and the worker's locked increment are unordered in every run
 * (main never takes l). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

int GLOB = 0;
pthread_mutex_t l = PTHREAD_MUTEX_INITIALIZER;

static void consume(int v) { __asm__ __volatile__("" : : "r"(v)); }

static void *worker(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&l);
    GLOB++;
    pthread_mutex_unlock(&l);
    return NULL;
}

int main(void)
{
    pthread_t threadid;
    pthread_create(&threadid, NULL, worker, NULL);
    GLOB = 1;
    consume(GLOB);              /* printf(GLOB) */
    pthread_join(threadid, NULL);
    puts("lockset_race_fig3_7: done");
    return 0;
}
