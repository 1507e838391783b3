/* verdict: race
 * racy: GLOB
 * figure: dissertation fig. 5.6
 * needs: lib
 * known-miss: both MSMs as the dissertation defines them (section 5.3)
 * expect-exit: 0
 */
/* Fig. 5.6: the parent initialises GLOB without a lock while the worker
 * writes it under an (unrelated) lock. The two writes are unordered in
 * every run. The dissertation's state machines miss it when the unlocked
 * write comes first (the usual order here: main writes right after
 * pthread_create): from New it goes to Exclusive-Write, and the parallel
 * second write holds a lock, so the state moves to Shared-Modified instead
 * of Race. hgrewrite's exclusive states keep the owner's lockset (package
 * msm, choice 13), so the worker's write meets main's empty one: reported
 * in either order. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

int GLOB = 0;
pthread_mutex_t l = PTHREAD_MUTEX_INITIALIZER;

static void *worker(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&l);
    GLOB = 1;
    pthread_mutex_unlock(&l);
    return NULL;
}

int main(void)
{
    pthread_t threadid;
    pthread_create(&threadid, NULL, worker, NULL);
    GLOB = 0;
    pthread_join(threadid, NULL);
    puts("msm_limit_locked_init_fig5_6: done");
    return 0;
}
