/* verdict: race-free
 * expect-exit: 0
 */
/* A spinlock on a C11 atomic_flag guards a tally and a histogram that
 * three threads update. Taking the lock is a one-byte exchange (xchg),
 * releasing it a plain one-byte store (x86's release store): the byte
 * must count as a synchronisation variable although the locked
 * instruction on it is one byte wide. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#define NT 3
#define ROUNDS 20000

static atomic_flag flag_lock = ATOMIC_FLAG_INIT;
static long flag_tally;
static int flag_histogram[16];

static void *worker(void *arg)
{
    long id = (long)arg;
    for (int i = 0; i < ROUNDS; i++) {
        while (atomic_flag_test_and_set_explicit(&flag_lock, memory_order_acquire))
            ;
        flag_tally += id + 1;
        flag_histogram[(i + id) & 15]++;
        atomic_flag_clear_explicit(&flag_lock, memory_order_release);
    }
    return NULL;
}

int main(void)
{
    pthread_t t[NT];
    for (long i = 0; i < NT; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < NT; i++)
        pthread_join(t[i], NULL);
    long sum = 0;
    for (int i = 0; i < 16; i++)
        sum += flag_histogram[i];
    printf("atomic_flag_spinlock: %ld %ld\n", flag_tally, sum);
    return flag_tally == (long)ROUNDS * (1 + 2 + 3) && sum == (long)NT * ROUNDS ? 0 : 1;
}
