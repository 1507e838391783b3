/* expect-exit: 0 */
/* corpus-variants: covering (a stress program: see coveringVariants in cmd/hgrewrite/e2e_test.go) */
/* 10,000 short-lived threads, four at a time, each adding to a
 * mutex-protected total and to its own slot. */
#include <pthread.h>
#include <stdio.h>

#define THREADS 10000
#define BATCH 4

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static long total;
static long slots[BATCH];

static void *worker(void *arg)
{
    long i = (long)arg;
    slots[i % BATCH] += i;
    pthread_mutex_lock(&mu);
    total += i;
    pthread_mutex_unlock(&mu);
    return NULL;
}

int main(void)
{
    for (long base = 0; base < THREADS; base += BATCH) {
        pthread_t t[BATCH];
        for (long k = 0; k < BATCH; k++)
            if (pthread_create(&t[k], NULL, worker, (void *)(base + k)) != 0)
                return 1;
        for (int k = 0; k < BATCH; k++)
            pthread_join(t[k], NULL);
    }
    printf("qa_ten_thousand_threads: total %ld, slots %ld %ld %ld %ld\n", total, slots[0], slots[1], slots[2], slots[3]);
    return 0;
}
