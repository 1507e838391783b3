/* verdict: race
 * racy: rw_value
 * needs: lib
 * expect-exit: 0
 */
/* The bumper writes rw_value while holding only a *read* lock; the peeker
 * reads it under a read lock too. A pthread barrier inside the read-locked
 * region guarantees that both threads hold the read lock at the same time,
 * and both accesses come after the barrier, so they are unordered in every
 * run (read locks do not exclude each other and create no
 * happens-before between readers). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

int rw_value;
pthread_rwlock_t value_lock = PTHREAD_RWLOCK_INITIALIZER;
pthread_barrier_t both_inside;

static void consume(int v) { __asm__ __volatile__("" : : "r"(v)); }

static void *bumper(void *arg)
{
    (void)arg;
    pthread_rwlock_rdlock(&value_lock);
    pthread_barrier_wait(&both_inside);
    rw_value++;                 /* BUG: write under a read lock */
    pthread_rwlock_unlock(&value_lock);
    return NULL;
}

static void *peeker(void *arg)
{
    (void)arg;
    pthread_rwlock_rdlock(&value_lock);
    pthread_barrier_wait(&both_inside);
    consume(rw_value);
    pthread_rwlock_unlock(&value_lock);
    return NULL;
}

int main(void)
{
    pthread_t b, p;
    pthread_barrier_init(&both_inside, NULL, 2);
    pthread_create(&b, NULL, bumper, NULL);
    pthread_create(&p, NULL, peeker, NULL);
    pthread_join(b, NULL);
    pthread_join(p, NULL);
    pthread_barrier_destroy(&both_inside);
    printf("rwlock_write_under_rdlock: %d\n", rw_value);
    return 0;
}
