/* verdict: race-free
 * expect-exit: 0
 */
/* Each thread updates its own __thread variables (a counter and a small
 * struct, addressed through %fs) and, at the end, stores its total into
 * its own slot of thread_totals. The same symbol names different memory in
 * each thread, so there is no sharing. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

#define NT 4
__thread long tls_count;
__thread struct { int hits; int misses; } tls_stats;
long thread_totals[NT];

static __attribute__((noinline)) void bump(int i)
{
    tls_count++;
    if (i % 3 == 0)
        tls_stats.hits++;
    else
        tls_stats.misses++;
}

static void *worker(void *arg)
{
    long id = (long)arg;
    for (int i = 0; i < 1000; i++)
        bump(i);
    thread_totals[id] = tls_count + tls_stats.hits + tls_stats.misses;
    return NULL;
}

int main(void)
{
    pthread_t t[NT];
    for (long i = 0; i < NT; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < NT; i++)
        pthread_join(t[i], NULL);
    bump(0);
    printf("thread_local_counters: %ld %ld %ld %ld main %ld\n", thread_totals[0],
           thread_totals[1], thread_totals[2], thread_totals[3], tls_count);
    return 0;
}
