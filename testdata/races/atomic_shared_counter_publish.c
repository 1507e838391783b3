/* verdict: race-free
 * expect-exit: 0
 */
/* Workers publish their results through one counter that they all
 * increment: each writes its result, then increments the counter many
 * times (read-modify-writes, acquire and release); the collector waits,
 * by read-modify-writes of its own, until the count is complete, and
 * reads every result. Read-modify-writes continue every release sequence
 * on the counter, so the collector's last one synchronises with each
 * worker's first increment, which comes after that worker's write. The
 * counter's clock passes from thread to thread at every increment: the
 * detector makes most of those exchanges without its Go side, and must
 * still carry each worker's past to the collector. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#define NW 4
#define EVENTS 20000

static atomic_long shared_count;
static long shared_result[NW];

static void *worker(void *arg)
{
    long id = (long)arg;
    shared_result[id] = id * 100 + 7;
    for (int i = 0; i < EVENTS; i++)
        atomic_fetch_add_explicit(&shared_count, 1, memory_order_acq_rel);
    return NULL;
}

int main(void)
{
    pthread_t t[NW];
    for (long i = 0; i < NW; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    while (atomic_fetch_add_explicit(&shared_count, 0, memory_order_acquire) < NW * EVENTS)
        ;
    long sum = 0;
    for (int i = 0; i < NW; i++)
        sum += shared_result[i];
    for (int i = 0; i < NW; i++)
        pthread_join(t[i], NULL);
    printf("atomic_shared_counter_publish: %ld\n", sum);
    return 0;
}
