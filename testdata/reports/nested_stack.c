/* A race three calls deep: each worker calls outer -> middle -> inner,
 * and inner updates shared_total without the lock it takes afterwards.
 * The report's stack must show inner, middle and outer in that order. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
long shared_total;
static long locked_count;

__attribute__((noinline)) static void inner(long v)
{
    shared_total += v;
    pthread_mutex_lock(&mu);
    locked_count++;
    pthread_mutex_unlock(&mu);
}

__attribute__((noinline)) static void middle(long v)
{
    inner(v * 2);
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void outer(long v)
{
    middle(v + 1);
    __asm__ volatile("" ::: "memory");
}

static void *worker(void *arg)
{
    for (long i = 0; i < 1000; i++)
        outer((long)arg + i);
    return NULL;
}

int main(void)
{
    pthread_t a, b;
    pthread_create(&a, NULL, worker, (void *)1);
    pthread_create(&b, NULL, worker, (void *)2);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("%ld %ld\n", shared_total > 0, locked_count);
    return 0;
}
