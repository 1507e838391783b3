/* verdict: race
 * racy: bypass_tally
 * expect-exit: 0
 */
/* Like atomic_flag_spinlock.c, but after its loop each thread adds once
 * more to the tally without taking the lock: those adds race with each
 * other and with the locked ones of the threads still running, in every
 * schedule (no lock orders a thread's last add before another's). The
 * histogram stays under the lock. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#define NT 3
#define ROUNDS 20000

static atomic_flag bypass_lock = ATOMIC_FLAG_INIT;
static long bypass_tally;
static int bypass_histogram[16];

static void *worker(void *arg)
{
    long id = (long)arg;
    for (int i = 0; i < ROUNDS; i++) {
        while (atomic_flag_test_and_set_explicit(&bypass_lock, memory_order_acquire))
            ;
        bypass_tally += id + 1;
        bypass_histogram[(i + id) & 15]++;
        atomic_flag_clear_explicit(&bypass_lock, memory_order_release);
    }
    bypass_tally += 100; /* without the lock */
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
        sum += bypass_histogram[i];
    printf("atomic_flag_spinlock_bypass_race: %d\n", sum == (long)NT * ROUNDS);
    return 0;
}
