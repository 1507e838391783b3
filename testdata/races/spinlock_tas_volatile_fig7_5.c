/* verdict: race-free
 * figure: dissertation fig. 7.5
 * needs: spin
 * expect-exit: 0
 */
/* Fig. 7.5: a lock built from an atomic Test-and-Set on a plain (volatile)
 * lock_flag, with a spinning read "while (lock_flag);" between attempts
 * and unlock by a plain store "lock_flag = FALSE". The dissertation treats
 * the races on lock_flag as intentional synchronisation races and expects
 * no report: the spinning read loop and its counterpart write (the unlock)
 * order the critical sections, which protect tas_total. (The empty asm is
 * a compiler barrier so the plain unlock store cannot move above the
 * critical section; x86-64 keeps stores in order.) ThreadSanitizer, which
 * follows C11, reports lock_flag (plain accesses racing with the atomic
 * TAS) and tas_total (a plain store is not a release). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

volatile int lock_flag = 0;
long tas_total;

static void lock(void)
{
    while (__sync_lock_test_and_set(&lock_flag, 1)) {
        while (lock_flag)
            ;
    }
}

static void unlock(void)
{
    __asm__ __volatile__("" ::: "memory");
    lock_flag = 0;
}

static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 1000; i++) {
        lock();
        tas_total += 1;
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
    printf("spinlock_tas_volatile_fig7_5: %ld\n", tas_total);
    return tas_total == 2000 ? 0 : 1;
}
