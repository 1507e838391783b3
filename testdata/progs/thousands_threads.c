/* expect-exit: 0 */
/* corpus-variants: covering (a stress program: see coveringVariants in cmd/hgrewrite/e2e_test.go) */
/* 2,000 threads alive at once: each waits at a semaphore until all have
 * been created, adds to a mutex-protected total and to a shared table
 * slot, and is joined. The detector's bookkeeping must not grow with the
 * square of the number of threads. */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>

#define THREADS 2000

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static long total;
static long table[64];
static sem_t go;

static void *worker(void *arg)
{
    long i = (long)arg;
    sem_wait(&go);
    pthread_mutex_lock(&mu);
    total += i;
    table[i % 64] += 1;
    pthread_mutex_unlock(&mu);
    return NULL;
}

int main(void)
{
    pthread_t *t = malloc(THREADS * sizeof *t);
    sem_init(&go, 0, 0);
    int made = 0;
    for (long i = 0; i < THREADS; i++)
        if (pthread_create(&t[made], NULL, worker, (void *)i) == 0)
            made++;
    for (int i = 0; i < made; i++)
        sem_post(&go);
    for (int i = 0; i < made; i++)
        pthread_join(t[i], NULL);
    long sum = 0;
    for (int i = 0; i < 64; i++)
        sum += table[i];
    printf("threads %s, total %ld, table %ld\n", made == THREADS ? "all" : "some", total, sum);
    free(t);
    return 0;
}
