/* verdict: race-free
 * figure: dissertation fig. 5.3 (corrected)
 * needs: lib
 * expect-exit: 0
 */
/* What fig. 5.3 intends, made race-free: main and the worker write GLOB
 * under lock l (in either order), then both pass a barrier, then both read
 * GLOB without the lock in parallel. Parallel reads after lock-protected
 * writes are not a race: the barrier orders every write before every
 * read. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

int GLOB = 0;
pthread_mutex_t l = PTHREAD_MUTEX_INITIALIZER;
pthread_barrier_t writes_done;
int worker_seen;

static void *worker(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&l);
    GLOB++;
    pthread_mutex_unlock(&l);

    pthread_barrier_wait(&writes_done);

    worker_seen = GLOB;         /* parallel read */
    return NULL;
}

int main(void)
{
    pthread_t threadid;
    pthread_barrier_init(&writes_done, NULL, 2);
    pthread_create(&threadid, NULL, worker, NULL);

    pthread_mutex_lock(&l);
    GLOB += 10;
    pthread_mutex_unlock(&l);

    pthread_barrier_wait(&writes_done);

    int main_seen = GLOB;       /* parallel read */

    pthread_join(threadid, NULL);
    pthread_barrier_destroy(&writes_done);
    printf("locked_writes_then_parallel_reads: %d %d\n", main_seen, worker_seen);
    return 0;
}
