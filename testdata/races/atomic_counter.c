/* verdict: race-free
 * expect-exit: 0
 */
/* Four threads increment a C11 atomic counter with atomic_fetch_add
 * ("lock xadd" on x86-64); main reads it after joining. Atomic
 * read-modify-writes never race with each other. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#define NT 4
atomic_long atomic_hits;

static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 1000; i++)
        atomic_fetch_add(&atomic_hits, 1);
    return NULL;
}

int main(void)
{
    pthread_t t[NT];
    for (int i = 0; i < NT; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < NT; i++)
        pthread_join(t[i], NULL);
    long total = atomic_load(&atomic_hits);
    printf("atomic_counter: %ld\n", total);
    return total == NT * 1000 ? 0 : 1;
}
