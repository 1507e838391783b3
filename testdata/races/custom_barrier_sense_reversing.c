/* verdict: race-free
 * needs: spin
 * expect-exit: 0
 */
/* A sense-reversing barrier built from C11 atomics: arrivals decrement
 * bar_count with atomic_fetch_sub (acq_rel, "lock xadd"); the last arrival
 * resets the count and flips bar_sense with a release store, the others
 * spin on acquire loads of bar_sense. Three threads use it to separate
 * phases exactly like barrier_phases.c. In the binary the release store
 * and the acquire loads are plain "mov"s, so the barrier is visible only
 * as a spinning read loop plus its counterpart write. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>

#define NT 3
#define PHASES 6
atomic_int bar_count = NT;
atomic_int bar_sense;
long sr_a[NT];
long sr_b[NT];

static void barrier_wait(int *local_sense)
{
    *local_sense = !*local_sense;
    if (atomic_fetch_sub_explicit(&bar_count, 1, memory_order_acq_rel) == 1) {
        atomic_store_explicit(&bar_count, NT, memory_order_relaxed);
        atomic_store_explicit(&bar_sense, *local_sense, memory_order_release);
    } else {
        while (atomic_load_explicit(&bar_sense, memory_order_acquire) != *local_sense)
            sched_yield();
    }
}

static void *worker(void *arg)
{
    long id = (long)arg;
    int sense = 0;
    sr_a[id] = id + 1;
    barrier_wait(&sense);
    for (int p = 0; p < PHASES; p++) {
        sr_b[id] = sr_a[id] + sr_a[(id + 1) % NT];
        barrier_wait(&sense);
        sr_a[id] = sr_b[id] + sr_b[(id + NT - 1) % NT];
        barrier_wait(&sense);
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
    printf("custom_barrier_sense_reversing: %ld %ld %ld\n", sr_a[0], sr_a[1], sr_a[2]);
    return 0;
}
