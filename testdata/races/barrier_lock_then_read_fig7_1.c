/* verdict: race-free
 * figure: dissertation fig. 7.1
 * needs: lib
 * expect-exit: 0
 */
/* Fig. 7.1: every thread increments DATA under a lock, then waits at a
 * barrier, then reads DATA without the lock. The unlocked reads come after
 * the barrier, which orders them after every locked write. A detector that
 * does not know pthread_barrier_wait reports apparent races on DATA. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

#define NT 4
int DATA;
pthread_mutex_t l = PTHREAD_MUTEX_INITIALIZER;
pthread_barrier_t b;
int seen[NT];

static void *worker(void *arg)
{
    long id = (long)arg;
    pthread_mutex_lock(&l);
    DATA++;
    pthread_mutex_unlock(&l);

    pthread_barrier_wait(&b);

    seen[id] = DATA;            /* "print DATA" */
    return NULL;
}

int main(void)
{
    pthread_t t[NT];
    pthread_barrier_init(&b, NULL, NT);
    for (long i = 0; i < NT; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < NT; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&b);
    printf("barrier_lock_then_read_fig7_1: %d %d %d %d\n", seen[0], seen[1], seen[2], seen[3]);
    return 0;
}
