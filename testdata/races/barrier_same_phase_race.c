/* verdict: race
 * racy: phase_cell
 * needs: lib
 * expect-exit: 0
 */
/* Barriers order accesses in different phases, not accesses within the
 * same phase: both threads write phase_cell between the same two barrier
 * waits, so those writes are unordered in every run. The other data
 * (phase_in, phase_out) are used correctly across phases. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

int phase_cell;
int phase_in[2];
int phase_out[2];
pthread_barrier_t bar;

static void *worker(void *arg)
{
    long id = (long)arg;
    phase_in[id] = (int)id + 5;
    pthread_barrier_wait(&bar);
    phase_out[id] = phase_in[1 - id] * 2;
    phase_cell = (int)id;       /* BUG: both threads, same phase */
    pthread_barrier_wait(&bar);
    return NULL;
}

int main(void)
{
    pthread_t t0, t1;
    pthread_barrier_init(&bar, NULL, 2);
    pthread_create(&t0, NULL, worker, (void *)0L);
    pthread_create(&t1, NULL, worker, (void *)1L);
    pthread_join(t0, NULL);
    pthread_join(t1, NULL);
    pthread_barrier_destroy(&bar);
    printf("barrier_same_phase_race: %d %d\n", phase_out[0], phase_out[1]);
    return 0;
}
