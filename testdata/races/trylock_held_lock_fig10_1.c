/* verdict: race
 * racy: DATA
 * figure: dissertation fig. 10.1
 * needs: lib
 * expect-exit: 0
 */
/* Fig. 10.1: thread 1 writes DATA and then takes MU for good (it never
 * unlocks it). Thread 2 spins "while (try_lock(MU) == 0) unlock(MU);" until
 * a trylock fails, and then writes DATA, reasoning that thread 1 must
 * already be past its write.
 *
 * The dissertation calls this program race-free (a false positive that no
 * detector avoids). Under the C11/C++11 memory model it is racy: a failed
 * trylock synchronises with nothing (C++ even allows it to fail
 * spuriously), and thread 1 performs no release operation after writing
 * DATA (pthread_mutex_lock is an acquire; thread 1 never unlocks). So the
 * two writes are unordered in every run; this is Boehm's trylock example
 * ("Reordering constraints for pthread-style locks"). ThreadSanitizer
 * reports it too. The expected report is therefore DATA. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

int DATA = 0;
pthread_mutex_t MU = PTHREAD_MUTEX_INITIALIZER;

static void *function_1(void *arg)
{
    (void)arg;
    DATA = 1;
    pthread_mutex_lock(&MU);    /* never unlocked */
    return NULL;
}

static void *function_2(void *arg)
{
    (void)arg;
    while (pthread_mutex_trylock(&MU) == 0)
        pthread_mutex_unlock(&MU);
    DATA = 2;
    return NULL;
}

int main(void)
{
    pthread_t t1, t2;
    pthread_create(&t1, NULL, function_1, NULL);
    pthread_create(&t2, NULL, function_2, NULL);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    puts("trylock_held_lock_fig10_1: done");
    return 0;
}
