/* expect-exit: 0 */
/* Bounded queue with 2 producers / 2 consumers using pthread_cond_wait,
 * pthread_cond_signal and pthread_cond_broadcast. Consumers' results are
 * combined with order-independent operations so output is deterministic. */
#include <pthread.h>
#include <stdio.h>

#define QSIZE 16
#define PER_PRODUCER 5000
#define NPROD 2
#define NCONS 2

static int queue[QSIZE];
static int head, tail, count;
static int producers_done;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_full = PTHREAD_COND_INITIALIZER;
static pthread_cond_t not_empty = PTHREAD_COND_INITIALIZER;

static long long cons_sum[NCONS];
static unsigned long long cons_xor[NCONS];
static long cons_count[NCONS];

static void *producer(void *p)
{
    int id = (int)(long)p;
    for (int i = 0; i < PER_PRODUCER; i++) {
        int v = id * 1000000 + i;
        pthread_mutex_lock(&mu);
        while (count == QSIZE)
            pthread_cond_wait(&not_full, &mu);
        queue[tail] = v;
        tail = (tail + 1) % QSIZE;
        count++;
        pthread_cond_signal(&not_empty);
        pthread_mutex_unlock(&mu);
    }
    pthread_mutex_lock(&mu);
    producers_done++;
    pthread_cond_broadcast(&not_empty);
    pthread_mutex_unlock(&mu);
    return NULL;
}

static void *consumer(void *p)
{
    int id = (int)(long)p;
    for (;;) {
        pthread_mutex_lock(&mu);
        while (count == 0 && producers_done < NPROD)
            pthread_cond_wait(&not_empty, &mu);
        if (count == 0) {
            pthread_mutex_unlock(&mu);
            break;
        }
        int v = queue[head];
        head = (head + 1) % QSIZE;
        count--;
        pthread_cond_signal(&not_full);
        pthread_mutex_unlock(&mu);

        cons_sum[id] += v;
        cons_xor[id] ^= (unsigned long long)v * 2654435761u;
        cons_count[id]++;
    }
    return NULL;
}

int main(void)
{
    pthread_t prod[NPROD], cons[NCONS];
    for (long i = 0; i < NCONS; i++)
        pthread_create(&cons[i], NULL, consumer, (void *)i);
    for (long i = 0; i < NPROD; i++)
        pthread_create(&prod[i], NULL, producer, (void *)i);
    for (int i = 0; i < NPROD; i++)
        pthread_join(prod[i], NULL);
    for (int i = 0; i < NCONS; i++)
        pthread_join(cons[i], NULL);

    long long sum = 0;
    unsigned long long x = 0;
    long n = 0;
    for (int i = 0; i < NCONS; i++) {
        sum += cons_sum[i];
        x ^= cons_xor[i];
        n += cons_count[i];
    }
    long long expect = 0;
    unsigned long long expect_x = 0;
    for (int id = 0; id < NPROD; id++)
        for (int i = 0; i < PER_PRODUCER; i++) {
            expect += id * 1000000 + i;
            expect_x ^= (unsigned long long)(id * 1000000 + i) * 2654435761u;
        }
    printf("items consumed: %ld\n", n);
    printf("sum: %lld (expected %lld)\n", sum, expect);
    printf("xor checksum: %016llx (expected %016llx)\n", x, expect_x);
    printf("queue empty at end: %s\n", count == 0 ? "yes" : "no");
    int ok = n == NPROD * PER_PRODUCER && sum == expect && x == expect_x;
    printf("%s\n", ok ? "OK" : "MISMATCH");
    return ok ? 0 : 1;
}
