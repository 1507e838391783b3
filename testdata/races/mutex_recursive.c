/* verdict: race-free
 * needs: lib
 * expect-exit: 0
 */
/* A recursive mutex is locked twice by the same thread; the inner unlock
 * must not remove the mutex from the thread's lockset, because the outer
 * lock is still held when nested_total is written afterwards. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

long nested_total;
long nested_calls;
pthread_mutex_t rec_mu;

static void add_inner(long v)
{
    pthread_mutex_lock(&rec_mu);
    nested_calls++;
    pthread_mutex_unlock(&rec_mu);
    (void)v;
}

static void add_outer(long v)
{
    pthread_mutex_lock(&rec_mu);
    add_inner(v);
    nested_total += v;          /* still protected by the outer lock */
    pthread_mutex_unlock(&rec_mu);
}

static void *worker(void *arg)
{
    long v = (long)arg;
    for (int i = 0; i < 500; i++)
        add_outer(v);
    return NULL;
}

int main(void)
{
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&rec_mu, &attr);
    pthread_mutexattr_destroy(&attr);

    pthread_t t1, t2;
    pthread_create(&t1, NULL, worker, (void *)1L);
    pthread_create(&t2, NULL, worker, (void *)2L);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    pthread_mutex_destroy(&rec_mu);
    printf("mutex_recursive: total %ld calls %ld\n", nested_total, nested_calls);
    return 0;
}
