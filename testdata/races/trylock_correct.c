/* verdict: race-free
 * needs: lib
 * expect-exit: 0
 */
/* pthread_mutex_trylock used correctly: the shared data is touched only when
 * trylock returned 0, and unlocked afterwards. A failed attempt just counts
 * in a thread-local variable and retries. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>

long trylock_total;
pthread_mutex_t try_mu = PTHREAD_MUTEX_INITIALIZER;

static void *worker(void *arg)
{
    long misses = 0;
    (void)arg;
    for (int i = 0; i < 500; i++) {
        while (pthread_mutex_trylock(&try_mu) != 0) {
            misses++;
            sched_yield();
        }
        trylock_total++;
        pthread_mutex_unlock(&try_mu);
    }
    return (void *)misses;
}

int main(void)
{
    pthread_t t1, t2;
    pthread_create(&t1, NULL, worker, NULL);
    pthread_create(&t2, NULL, worker, NULL);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    printf("trylock_correct: %ld\n", trylock_total);
    return trylock_total == 1000 ? 0 : 1;
}
