/* verdict: race-free
 * needs: lib
 * expect-exit: 0
 */
/* A slab allocator gives a slab's pages back to the kernel with
 * madvise(MADV_DONTNEED) when the slab empties, and a later user of the
 * slab, on another thread, finds zero-filled pages: the old contents, and
 * the old accesses, are gone, as after free. The first thread fills the
 * slab, gives it back and exits; the second starts later and fills it
 * again. Nothing orders the threads (the pause only lets the first finish
 * first). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#define SLAB_WORDS 2048

static long *slab;

static long fill_and_release(long seed)
{
    long sum = 0;
    for (int i = 0; i < SLAB_WORDS; i++) {
        slab[i] += seed + i; /* zero after the previous release */
        sum += slab[i];
    }
    madvise(slab, SLAB_WORDS * sizeof(long), MADV_DONTNEED);
    return sum;
}

static void *first(void *arg)
{
    (void)arg;
    fill_and_release(1); /* its result stays here: passing it on would order the threads */
    return NULL;
}

static void *second(void *arg)
{
    *(long *)arg = fill_and_release(2);
    return NULL;
}

int main(void)
{
    slab = mmap(NULL, SLAB_WORDS * sizeof(long), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (slab == MAP_FAILED)
        return 1;
    long sum = 0;
    pthread_t t1, t2;
    pthread_create(&t1, NULL, first, NULL);
    pthread_detach(t1);
    usleep(100000);
    pthread_create(&t2, NULL, second, &sum);
    pthread_join(t2, NULL);
    printf("madvise_slab_reuse_other_thread: %ld\n", sum);
    return 0;
}
