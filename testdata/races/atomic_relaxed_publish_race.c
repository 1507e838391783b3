/* verdict: race
 * racy: relaxed_payload
 * known-miss: binary-level detectors (relaxed and release/acquire both compile to plain mov on x86-64)
 * expect-exit: 0
 */
/* Like atomic_release_acquire_publish.c but the flag is stored and loaded
 * with memory_order_relaxed, which creates no happens-before edge: the
 * write of relaxed_payload and the read after the spin loop race in every
 * run under C11 (the compiler may even reorder them). The flag itself is
 * atomic and not racy. On x86-64 the machine code is the same as with
 * release/acquire, so a detector working on the binary that accepts the
 * spinning read loop as synchronisation cannot see this race; ThreadSanitizer
 * (compiler instrumentation) does. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>

int relaxed_payload;
atomic_int relaxed_flag;

static void consume(int v) { __asm__ __volatile__("" : : "r"(v)); }

static void *publisher(void *arg)
{
    (void)arg;
    relaxed_payload = 99;
    atomic_store_explicit(&relaxed_flag, 1, memory_order_relaxed);
    return NULL;
}

static void *reader(void *arg)
{
    (void)arg;
    while (atomic_load_explicit(&relaxed_flag, memory_order_relaxed) == 0)
        sched_yield();
    consume(relaxed_payload);   /* BUG: relaxed gives no ordering */
    return NULL;
}

int main(void)
{
    pthread_t p, r;
    pthread_create(&r, NULL, reader, NULL);
    pthread_create(&p, NULL, publisher, NULL);
    pthread_join(p, NULL);
    pthread_join(r, NULL);
    puts("atomic_relaxed_publish_race: done");
    return 0;
}
