/* verdict: race-free
 * expect-exit: 0
 */
/* Short-lived detached threads, created one after another, each fill an
 * array on their own stack and a __thread array through a helper that
 * takes a pointer, then add their sums into shared atomic counters.
 * glibc's stack cache gives an exited thread's stack block (the stack,
 * and the static TLS above it) to the next thread created, so a later
 * thread writes memory that an earlier one wrote; only glibc orders the
 * two (the earlier thread's exit, the later one's creation), and that is
 * not a race: the memory belonged to a thread that had gone. Each
 * thread's atomics come after its array accesses, so they order nothing
 * between two threads' arrays. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

#define THREADS 120
#define LOCAL_BYTES (64 << 10)
#define TLS_BYTES (16 << 10)

static atomic_long checksum;
static atomic_int remaining = THREADS;
static __thread unsigned char tls_block[TLS_BYTES];

__attribute__((noinline)) static void fill(unsigned char *b, size_t n, unsigned v)
{
    for (size_t i = 0; i < n; i += 32)
        b[i] = (unsigned char)(v + i / 32);
}

__attribute__((noinline)) static long total(const unsigned char *b, size_t n)
{
    long s = 0;
    for (size_t i = 0; i < n; i += 32)
        s += b[i];
    return s;
}

static void *worker(void *arg)
{
    unsigned char local[LOCAL_BYTES];
    unsigned v = (unsigned)(long)arg;
    fill(local, sizeof local, v);
    fill(tls_block, sizeof tls_block, v + 1);
    long s = total(local, sizeof local) + total(tls_block, sizeof tls_block);
    atomic_fetch_add(&checksum, s);
    atomic_fetch_sub(&remaining, 1);
    return NULL;
}

int main(void)
{
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    for (long i = 0; i < THREADS; i++) {
        pthread_t t;
        if (pthread_create(&t, &attr, worker, (void *)i) != 0) {
            perror("pthread_create");
            return 1;
        }
        usleep(300); /* the thread has mostly exited: its stack goes to the next */
    }
    while (atomic_load(&remaining) > 0)
        usleep(1000);
    pthread_attr_destroy(&attr);
    printf("detached_stack_reuse: %ld\n", atomic_load(&checksum));
    return 0;
}
