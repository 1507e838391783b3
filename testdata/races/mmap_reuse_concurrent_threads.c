/* verdict: race-free
 * needs: lib
 * expect-exit: 0
 */
/* Scratch mappings given back while other threads map theirs: sixteen
 * workers each map 64 KB, write and read one byte of it, and unmap it,
 * fifty times, all at once. The kernel hands an address one worker just
 * gave back to the next worker that maps, so the same pages pass from
 * thread to thread with nothing ordering them, and nothing needs to: each
 * mapping is new memory. The first access to a fresh mapping is one the
 * detector may keep in the thread's buffer for a while, which must be
 * settled before the unmap, not after, when another worker may have
 * written the same address of its own mapping already. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <sys/mman.h>

#define WORKERS 16
#define ROUNDS 50
#define SCRATCH 65536

static long sums[WORKERS];

static void *worker(void *arg)
{
    long id = (long)arg, sum = 0;
    for (int k = 0; k < ROUNDS; k++) {
        char *p = mmap(NULL, SCRATCH, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return NULL;
        p[k] = (char)(id + k);
        sum += p[k];
        munmap(p, SCRATCH);
    }
    sums[id] = sum; /* joined below: ordered */
    return NULL;
}

int main(void)
{
    pthread_t t[WORKERS];
    for (long i = 0; i < WORKERS; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    long total = 0;
    for (int i = 0; i < WORKERS; i++) {
        pthread_join(t[i], NULL);
        total += sums[i];
    }
    printf("mmap_reuse_concurrent_threads: %ld\n", total);
    return 0;
}
