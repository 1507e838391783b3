/* verdict: race-free
 * needs: spin
 * expect-exit: 0
 */
/* The publisher fills the non-atomic array published_data and then sets
 * data_ready with a release store; the reader spins on an acquire load of
 * data_ready and then reads published_data. Correct C11. On x86-64 both
 * the release store and the acquire load are plain "mov" instructions,
 * indistinguishable in the binary from non-atomic accesses, so a binary
 * detector can only find this synchronisation by recognising the spinning
 * read loop (ch. 7). */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>

int published_data[32];
atomic_int data_ready;
long reader_sum;

static void *publisher(void *arg)
{
    (void)arg;
    for (int i = 0; i < 32; i++)
        published_data[i] = i * 3;
    atomic_store_explicit(&data_ready, 1, memory_order_release);
    return NULL;
}

static void *reader(void *arg)
{
    (void)arg;
    while (atomic_load_explicit(&data_ready, memory_order_acquire) == 0)
        sched_yield();
    long sum = 0;
    for (int i = 0; i < 32; i++)
        sum += published_data[i];
    reader_sum = sum;
    return NULL;
}

int main(void)
{
    pthread_t p, r;
    pthread_create(&r, NULL, reader, NULL);
    pthread_create(&p, NULL, publisher, NULL);
    pthread_join(p, NULL);
    pthread_join(r, NULL);
    printf("atomic_release_acquire_publish: %ld\n", reader_sum);
    return 0;
}
