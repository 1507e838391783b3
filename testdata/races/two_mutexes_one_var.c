/* verdict: race
 * racy: mixed_counter
 * needs: lib
 * expect-exit: 0
 */
/* Each thread holds a lock while it updates mixed_counter, but not the same
 * lock: thread A uses mu_a, thread B uses mu_b. The candidate lockset of
 * mixed_counter becomes empty and, since different mutexes create no
 * happens-before edge between the threads, the updates race in every run. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

int mixed_counter;
pthread_mutex_t mu_a = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t mu_b = PTHREAD_MUTEX_INITIALIZER;

static void *bump(void *arg)
{
    pthread_mutex_t *mu = arg;
    for (int i = 0; i < 500; i++) {
        pthread_mutex_lock(mu);
        mixed_counter++;
        pthread_mutex_unlock(mu);
    }
    return NULL;
}

int main(void)
{
    pthread_t ta, tb;
    pthread_create(&ta, NULL, bump, &mu_a);
    pthread_create(&tb, NULL, bump, &mu_b);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    puts("two_mutexes_one_var: done");
    return 0;
}
