/* verdict: race-free
 * needs: spin
 * expect-exit: 0
 */
/* A consumer polls an atomic flag with acquire loads and nanosleep(200 us)
 * between polls; the producer writes nano_data and sets the flag with a
 * release store. Correct C11 (ThreadSanitizer agrees), but in the binary
 * both flag accesses are plain "mov"s: a binary detector needs to see the
 * spinning read loop (its body calls nanosleep, which does not modify the
 * flag). Whether it spins at all depends on the schedule. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

atomic_int nano_flag;
long nano_data[4];

static void *producer(void *arg)
{
    (void)arg;
    for (int i = 0; i < 4; i++)
        nano_data[i] = 10 + i;
    atomic_store_explicit(&nano_flag, 1, memory_order_release);
    return NULL;
}

static void *consumer(void *arg)
{
    struct timespec ts = { 0, 200 * 1000 };
    (void)arg;
    while (atomic_load_explicit(&nano_flag, memory_order_acquire) == 0)
        nanosleep(&ts, NULL);
    for (int i = 0; i < 4; i++)
        nano_data[i] *= 2;
    return NULL;
}

int main(void)
{
    pthread_t p, c;
    pthread_create(&c, NULL, consumer, NULL);
    pthread_create(&p, NULL, producer, NULL);
    pthread_join(p, NULL);
    pthread_join(c, NULL);
    printf("spin_flag_nanosleep: %ld %ld\n", nano_data[0], nano_data[3]);
    return 0;
}
