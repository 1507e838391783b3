/* verdict: race-free
 * needs: lib
 * expect-exit: 0
 */
/* The first owner allocates a 4000-byte block, writes all of it, and
 * frees it; only then (it polls a mutex-protected stage) does the second
 * owner allocate a block of the same size, which glibc normally places at
 * the same address: all threads share one arena (one_arena), and blocks
 * of this size bypass the per-thread caches. The second owner writes and
 * reads the new block. Eight rounds: a small allocation of another thread
 * between the free and the malloc (one of the runtime's, about one run in
 * forty) can take the freed memory, and a round without reuse tests
 * nothing. C11 7.22.3p2: a deallocation
 * synchronises with the next allocation of the same memory, so the two
 * owners' accesses are ordered; the detector must forget the old block's
 * history on free (or treat malloc as a fresh allocation). Nothing else
 * orders the two threads' block accesses for a hybrid detector that draws
 * no happens-before from locks. */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BLOCK_BYTES 4000
#define ROUNDS 8

pthread_mutex_t stage_mu = PTHREAD_MUTEX_INITIALIZER;
int stage;                  /* protected by stage_mu: 2r+1 = second owner
                               ready for round r, 2r+2 = its block freed */
long second_owner_sum;
unsigned char *first_block; /* written by the first owner before it frees */
int reused;                 /* rounds whose second block was the first's */

__attribute__((noinline)) static unsigned char *alloc_block(void)
{
    unsigned char *p = malloc(BLOCK_BYTES);
    if (!p)
        abort();
    return p;
}

static void set_up_thread_cache(void)
{
    /* A thread's first malloc also allocates its cache structure from the
     * arena; do that now, not inside the freed block later. (volatile:
     * gcc may delete a malloc/free pair otherwise.) */
    void *volatile warm = malloc(16);
    free(warm);
}

static void set_stage(int v)
{
    pthread_mutex_lock(&stage_mu);
    stage = v;
    pthread_mutex_unlock(&stage_mu);
}

static void await_stage(int v)
{
    for (;;) {
        pthread_mutex_lock(&stage_mu);
        int now = stage;
        pthread_mutex_unlock(&stage_mu);
        if (now >= v)
            return;
        sched_yield();
    }
}

static void *first_owner(void *arg)
{
    (void)arg;
    set_up_thread_cache();
    for (int r = 0; r < ROUNDS; r++) {
        await_stage(2 * r + 1);
        unsigned char *p = alloc_block();
        for (int i = 0; i < BLOCK_BYTES; i += 4)
            p[i] = (unsigned char)i;
        first_block = p;
        free(p);
        set_stage(2 * r + 2);
    }
    return NULL;
}

static void *second_owner(void *arg)
{
    (void)arg;
    set_up_thread_cache();
    for (int r = 0; r < ROUNDS; r++) {
        set_stage(2 * r + 1);
        await_stage(2 * r + 2);
        unsigned char *q = alloc_block();
        reused += q == first_block;
        for (int i = 0; i < BLOCK_BYTES; i += 4)
            q[i] = 1;
        long sum = 0;
        for (int i = 0; i < BLOCK_BYTES; i += 4)
            sum += q[i];
        free(q);
        second_owner_sum = sum;
    }
    return NULL;
}

/* one_arena runs the program again with every thread on glibc's main
 * arena, where it frees and allocates the blocks: the detector's runtime
 * starts threads of its own before main, which make arenas of their own
 * that mallopt(M_ARENA_MAX, 1) no longer undoes, and the program's
 * threads would share them out (the second owner's block would come from
 * another arena, and test nothing). */
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
    pthread_t a, b;
    (void)argc;
    one_arena(argv);
    mallopt(M_ARENA_MAX, 1);
    pthread_create(&a, NULL, first_owner, NULL);
    pthread_create(&b, NULL, second_owner, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    if (!reused)
        return 2; /* no round reused the block: the test tested nothing */
    printf("heap_free_reuse_other_thread: %ld\n", second_owner_sum);
    return 0;
}
