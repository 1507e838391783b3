/* verdict: race
 * racy: heap:main
 * expect-exit: 0
 */
/* A realloc that cannot be met returns NULL and leaves the old block to
 * the program, which goes on using it: two threads then write the same
 * element of that block with no lock between them. The report must name
 * the block as a live heap block (allocated in main), not as memory that
 * was freed. Only the block is racy; each thread's tally is its own. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* ThreadSanitizer's allocator aborts on a request it cannot meet unless
 * told to return NULL as malloc does; this has no effect elsewhere. */
const char *__tsan_default_options(void) { return "allocator_may_return_null=1"; }

static long *block;
static long tally[2];
static volatile size_t huge = (size_t)1 << 39; /* 512 GB: more than this machine can give */

static void *writer(void *arg)
{
    long id = (long)arg;
    for (int i = 0; i < 1000; i++) {
        block[3] = id + i;
        tally[id]++;
    }
    return NULL;
}

int main(void)
{
    block = calloc(16, sizeof *block);
    long *bigger = realloc(block, huge);
    if (bigger) { /* a machine that had the memory: the race is on the new block */
        block = bigger;
        printf("realloc_failed_block_race: realloc succeeded\n");
    }
    pthread_t t[2];
    for (long i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, writer, (void *)i);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("realloc_failed_block_race: %ld %ld\n", tally[0], tally[1]);
    free(block);
    return 0;
}
