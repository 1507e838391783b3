/* verdict: race
 * racy: owned_late_result
 * expect-exit: 0
 */
/* Like atomic_owned_counter_publish.c, but each worker writes its result
 * after its last increment: the collector's read of the result, made
 * once the counter is complete, is ordered after no write of it. Every
 * schedule races. The workers' many increments before stay on their
 * owners; the race must still be found. */
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
static struct slot late_counts[NW];
static long owned_late_result[NW];

static void *worker(void *arg)
{
    long id = (long)arg;
    for (int i = 0; i < EVENTS; i++)
        atomic_fetch_add_explicit(&late_counts[id].count, 1, memory_order_release);
    owned_late_result[id] = id * 100 + 7;
    return NULL;
}

int main(void)
{
    pthread_t t[NW];
    for (long i = 0; i < NW; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    long sum = 0;
    for (int i = 0; i < NW; i++) {
        while (atomic_fetch_add_explicit(&late_counts[i].count, 0, memory_order_acquire) < EVENTS)
            ;
        sum += owned_late_result[i];
    }
    for (int i = 0; i < NW; i++)
        pthread_join(t[i], NULL);
    printf("atomic_owned_counter_publish_race: %ld\n", sum >= 0);
    return 0;
}
