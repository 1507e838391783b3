/* verdict: race-free
 * needs: spin
 * expect-exit: 0
 */
/* A test-and-test-and-set spinlock: spin with relaxed loads until the lock
 * word looks free (a spinning read loop, always entered at least once),
 * then try to take it with an acquire exchange; release with a
 * memory_order_release store. The release store compiles to a plain "mov",
 * so the unlock -> lock edge is only visible to a binary detector through
 * the spinning read loop and its counterpart write. Protects ttas_total. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>

atomic_int ttas_word;
long ttas_total;

static void ttas_lock(void)
{
    for (;;) {
        while (atomic_load_explicit(&ttas_word, memory_order_relaxed) != 0)
            sched_yield();
        if (atomic_exchange_explicit(&ttas_word, 1, memory_order_acquire) == 0)
            return;
    }
}

static void ttas_unlock(void)
{
    atomic_store_explicit(&ttas_word, 0, memory_order_release);
}

static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 1000; i++) {
        ttas_lock();
        ttas_total += 5;
        ttas_unlock();
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
    printf("spinlock_ttas: %ld\n", ttas_total);
    return ttas_total == 10000 ? 0 : 1;
}
