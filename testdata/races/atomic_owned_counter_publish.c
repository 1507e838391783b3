/* verdict: race-free
 * expect-exit: 0
 */
/* Each of three workers counts events on its own atomic counter
 * (lock xadd, relaxed) many times; then it writes its result and makes
 * the last increment with release order. The collector polls each
 * counter with an acquire read-modify-write (fetch_add of 0) until it
 * reaches the total, and then reads the worker's result: the polling
 * RMW reads the value the release RMW wrote, so the result's write
 * happens before its read. The counters stay with their owners until
 * the end, the pattern that lets a detector keep an owner's increments
 * off its slow path, which must not lose the last one's release. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#define NW 3
#define EVENTS 20000

struct slot {
    atomic_long count;
    char pad[56];
};
static struct slot owned_counts[NW];
static long owned_results[NW];

static void *worker(void *arg)
{
    long id = (long)arg;
    for (int i = 0; i < EVENTS - 1; i++)
        atomic_fetch_add_explicit(&owned_counts[id].count, 1, memory_order_relaxed);
    owned_results[id] = id * 100 + 7;
    atomic_fetch_add_explicit(&owned_counts[id].count, 1, memory_order_release);
    return NULL;
}

int main(void)
{
    pthread_t t[NW];
    for (long i = 0; i < NW; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    long sum = 0;
    for (int i = 0; i < NW; i++) {
        while (atomic_fetch_add_explicit(&owned_counts[i].count, 0, memory_order_acquire) < EVENTS)
            ;
        sum += owned_results[i];
    }
    for (int i = 0; i < NW; i++)
        pthread_join(t[i], NULL);
    printf("atomic_owned_counter_publish: %ld\n", sum);
    return sum == 0 * 100 + 7 + 1 * 100 + 7 + 2 * 100 + 7 ? 0 : 1;
}
