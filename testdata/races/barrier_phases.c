/* verdict: race-free
 * needs: lib
 * expect-exit: 0
 */
/* Three threads compute in phases separated by pthread_barrier_wait. In
 * each phase a thread writes only its own slot of one array and reads its
 * neighbours' slots of the array written in the previous phase. Every
 * cross-thread access pair is separated by a barrier. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

#define NT 3
#define PHASES 6
long phase_a[NT];
long phase_b[NT];
pthread_barrier_t phase_barrier;

static void *worker(void *arg)
{
    long id = (long)arg;
    phase_a[id] = id + 1;
    pthread_barrier_wait(&phase_barrier);
    for (int p = 0; p < PHASES; p++) {
        /* read phase_a (written before the last barrier), write phase_b */
        phase_b[id] = phase_a[id] + phase_a[(id + 1) % NT];
        pthread_barrier_wait(&phase_barrier);
        /* read phase_b, write phase_a */
        phase_a[id] = phase_b[id] + phase_b[(id + NT - 1) % NT];
        pthread_barrier_wait(&phase_barrier);
    }
    return NULL;
}

int main(void)
{
    pthread_t t[NT];
    pthread_barrier_init(&phase_barrier, NULL, NT);
    for (long i = 0; i < NT; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < NT; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&phase_barrier);
    printf("barrier_phases: %ld %ld %ld\n", phase_a[0], phase_a[1], phase_a[2]);
    return 0;
}
