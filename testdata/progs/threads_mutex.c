/* expect-exit: 0 */
/* 4 pthreads increment a mutex-protected shared counter and fill
 * per-thread arrays; main joins all threads before printing totals. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NTHREADS 4
#define ITERS 100000
#define ARRLEN 256

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long counter;
static long per_thread[NTHREADS][ARRLEN];
static long thread_sums[NTHREADS];

struct targ {
    int id;
    long *heap;
};

static void *worker(void *p)
{
    struct targ *a = p;
    long local = 0;
    for (int i = 0; i < ITERS; i++) {
        pthread_mutex_lock(&lock);
        counter++;
        pthread_mutex_unlock(&lock);
        per_thread[a->id][i % ARRLEN] += i ^ a->id;
        a->heap[i % 64] += i;
        local += i % 7;
    }
    for (int j = 0; j < ARRLEN; j++)
        local += per_thread[a->id][j] % 1000;
    for (int j = 0; j < 64; j++)
        local += a->heap[j] % 997;
    thread_sums[a->id] = local;
    return NULL;
}

int main(void)
{
    pthread_t th[NTHREADS];
    struct targ args[NTHREADS];

    for (int i = 0; i < NTHREADS; i++) {
        args[i].id = i;
        args[i].heap = calloc(64, sizeof(long));
        if (!args[i].heap)
            return 1;
        if (pthread_create(&th[i], NULL, worker, &args[i]) != 0) {
            printf("pthread_create failed\n");
            return 1;
        }
    }
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(th[i], NULL);

    printf("counter = %ld (expected %ld)\n", counter, (long)NTHREADS * ITERS);
    long grand = 0;
    for (int i = 0; i < NTHREADS; i++) {
        long arrsum = 0;
        for (int j = 0; j < ARRLEN; j++)
            arrsum += per_thread[i][j];
        printf("thread %d: arrsum=%ld local=%ld\n", i, arrsum, thread_sums[i]);
        grand += arrsum + thread_sums[i];
        free(args[i].heap);
    }
    printf("grand total = %ld\n", grand);
    printf("%s\n", counter == (long)NTHREADS * ITERS ? "OK" : "MISMATCH");
    return counter == (long)NTHREADS * ITERS ? 0 : 1;
}
