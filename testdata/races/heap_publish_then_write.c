/* verdict: race
 * racy: heap:alloc_results
 * needs: lib
 * expect-exit: 0
 */
/* Stand-in for "a stack variable of main written by threads through a
 * pointer" (a stack slot has no symbol to name): the block is on the heap
 * and reached through the global pointer shared_results. The publisher
 * allocates it, publishes the pointer under publish_mu and then, after
 * unlocking, writes results[0]. The reader polls the pointer under the
 * mutex and reads results[0] once it is non-NULL. The publication itself
 * is race-free, but the late write happens after the publisher's last
 * release and the reader's read after its acquire, so they are unordered
 * in every run. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

int *shared_results;        /* protected by publish_mu */
pthread_mutex_t publish_mu = PTHREAD_MUTEX_INITIALIZER;

static void consume(int v) { __asm__ __volatile__("" : : "r"(v)); }

__attribute__((noinline)) static int *alloc_results(void)
{
    int *r = calloc(8, sizeof *r);
    if (!r)
        abort();
    return r;
}

static void *publisher(void *arg)
{
    (void)arg;
    int *r = alloc_results();
    pthread_mutex_lock(&publish_mu);
    shared_results = r;
    pthread_mutex_unlock(&publish_mu);
    r[0] = 7;                   /* BUG: written after publication */
    return NULL;
}

static void *reader(void *arg)
{
    int *r;
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&publish_mu);
        r = shared_results;
        pthread_mutex_unlock(&publish_mu);
        if (r)
            break;
        sched_yield();
    }
    consume(r[0]);
    return NULL;
}

int main(void)
{
    pthread_t p, r;
    pthread_create(&p, NULL, publisher, NULL);
    pthread_create(&r, NULL, reader, NULL);
    pthread_join(p, NULL);
    pthread_join(r, NULL);
    free(shared_results);
    puts("heap_publish_then_write: done");
    return 0;
}
