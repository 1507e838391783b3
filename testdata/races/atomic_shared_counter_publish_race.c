/* verdict: race
 * racy: shared_late_result
 * expect-exit: 0
 */
/* Like atomic_shared_counter_publish.c, but each worker writes a second
 * result after its last increment: the collector's read of it, made once
 * the count is complete, is ordered after no write of it. Every schedule
 * races. The results written before the increments stay race-free: the
 * report names the late results alone. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#define NW 4
#define EVENTS 20000

static atomic_long shared_count;
static long shared_early_result[NW];
static long shared_late_result[NW];

static void consume(long v) { __asm__ volatile("" : : "r"(v)); }

static void *worker(void *arg)
{
    long id = (long)arg;
    shared_early_result[id] = id * 100 + 7;
    for (int i = 0; i < EVENTS; i++)
        atomic_fetch_add_explicit(&shared_count, 1, memory_order_acq_rel);
    shared_late_result[id] = id * 100 + 9;
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
    for (int i = 0; i < NW; i++) {
        sum += shared_early_result[i];
        consume(shared_late_result[i]);
    }
    for (int i = 0; i < NW; i++)
        pthread_join(t[i], NULL);
    printf("atomic_shared_counter_publish_race: %ld\n", sum);
    return 0;
}
