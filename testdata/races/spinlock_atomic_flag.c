/* verdict: race-free
 * expect-exit: 0
 */
/* A test-and-set spinlock on a C11 atomic_flag (sequentially consistent
 * defaults) protects flag_total. gcc compiles both atomic_flag_test_and_set
 * and atomic_flag_clear to "xchg" (a locked read-modify-write), so every
 * access to the lock word is an atomic RMW: the happens-before edges come
 * from the atomics themselves, no spin-loop heuristic is needed (the lock
 * loop modifies the flag, so it is not a spinning read loop anyway). */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>

atomic_flag flag_lock = ATOMIC_FLAG_INIT;
long flag_total;

static void lock(void)
{
    while (atomic_flag_test_and_set(&flag_lock))
        sched_yield();
}

static void unlock(void)
{
    atomic_flag_clear(&flag_lock);
}

static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 1000; i++) {
        lock();
        flag_total += 3;
        unlock();
    }
    return NULL;
}

int main(void)
{
    pthread_t a, b;
    pthread_create(&a, NULL, worker, NULL);
    pthread_create(&b, NULL, worker, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("spinlock_atomic_flag: %ld\n", flag_total);
    return flag_total == 6000 ? 0 : 1;
}
