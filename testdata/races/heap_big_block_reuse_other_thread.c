/* verdict: race-free
 * needs: lib
 * expect-exit: 0
 */
/* Two threads each allocate blocks of hundreds of kilobytes, write them
 * and free them, over and over, with nothing else between them: the
 * memory one frees is the next the other gets (all threads share glibc's
 * main arena: one_arena; no mmap, no trimming). C11 7.22.3p2: a
 * deallocation synchronises with the next allocation of the same memory,
 * so nothing races, and since nothing else orders the two threads, a
 * detector that kept any of a block's history past its free or its next
 * allocation would pair the old owner's writes with the new owner's.
 * The detector resets the shadow of big blocks page by page (pages in
 * memory take zeros or are given back, the others are dropped): the
 * first size is written whole and has more pages of shadow than it
 * stores into, the second is written whole and has fewer, the third is
 * written at every sixteenth kilobyte (pages in memory between pages
 * that are not). The program exits with status 2 if no block went from
 * one thread to the other in eight passes (the test would test nothing). */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ROUNDS 12

static const size_t sizes[3] = {300 * 1024, 200 * 1024, 400 * 1024};

struct owner {
    uintptr_t got[ROUNDS][3]; /* the blocks' addresses, read after the join */
    long sum;
};

__attribute__((noinline)) static unsigned char *alloc_block(size_t n)
{
    unsigned char *p = malloc(n);
    if (!p)
        abort();
    return p;
}

static void *owner(void *arg)
{
    struct owner *o = arg;
    for (int r = 0; r < ROUNDS; r++) {
        for (int b = 0; b < 3; b++) {
            unsigned char *p = alloc_block(sizes[b]);
            o->got[r][b] = (uintptr_t)p;
            size_t step = b == 2 ? 16 * 1024 : 8;
            for (size_t i = 0; i < sizes[b]; i += step)
                p[i] = (unsigned char)(i + (size_t)r);
            for (size_t i = 0; i < sizes[b]; i += step)
                o->sum += p[i];
            free(p);
        }
    }
    return NULL;
}

/* shared: some block of the first owner's had the address of one of the
 * second's */
static int shared(const struct owner *a, const struct owner *b)
{
    for (int r = 0; r < ROUNDS; r++)
        for (int i = 0; i < 3; i++)
            for (int s = 0; s < ROUNDS; s++)
                for (int j = 0; j < 3; j++)
                    if (a->got[r][i] == b->got[s][j])
                        return 1;
    return 0;
}

/* one_arena runs the program again with every thread on glibc's main
 * arena: the detector's runtime starts threads of its own before main,
 * which make arenas that mallopt(M_ARENA_MAX, 1) no longer undoes, and
 * the program's threads would share them out. */
static void one_arena(char **argv)
{
    const char *t = getenv("GLIBC_TUNABLES");
    if (t && strstr(t, "glibc.malloc.arena_max=1"))
        return;
    setenv("GLIBC_TUNABLES", "glibc.malloc.arena_max=1", 1);
    execv("/proc/self/exe", argv);
}

int main(int argc, char **argv)
{
    static struct owner owners[2];
    pthread_t t[2];
    (void)argc;
    one_arena(argv);
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    /* Two threads that run exactly side by side may each keep to memory
     * of their own for a whole pass (seen once on a loaded machine):
     * the pass is repeated then, the new threads ordered after the old
     * by the joins. */
    int pass = 0;
    do {
        memset(owners, 0, sizeof owners);
        for (int i = 0; i < 2; i++)
            pthread_create(&t[i], NULL, owner, &owners[i]);
        for (int i = 0; i < 2; i++)
            pthread_join(t[i], NULL);
    } while (!shared(&owners[0], &owners[1]) && ++pass < 8);
    if (!shared(&owners[0], &owners[1]))
        return 2; /* the test tests nothing */
    printf("heap_big_block_reuse_other_thread: %ld\n", owners[0].sum + owners[1].sum);
    return 0;
}
