/* expect-exit: 0 */
/* The allocation functions' error paths, which the runtime wraps: bad
 * alignments, sizes that cannot be met, calloc's overflowing product,
 * realloc to zero and from NULL. Each result and errno is printed (errno
 * set to a marker first): they must be the native ones. */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* sizes the compiler cannot see, so that it neither warns nor folds */
static volatile size_t max_size = SIZE_MAX;

static void memalign_case(size_t align, size_t n)
{
    void *p = (void *)1;
    errno = 4242;
    int r = posix_memalign(&p, align, n);
    printf("posix_memalign(%zu, %zu) = %s, errno %d, out %s\n", align, n, r ? strerror(r) : "0", errno,
           r ? (p == (void *)1 ? "untouched" : "changed") : "set");
    if (r == 0)
        free(p);
}

static void malloc_case(size_t n)
{
    errno = 4242;
    void *p = malloc(n);
    printf("malloc(%zu) = %s, errno %d\n", n, p ? "block" : "NULL", errno);
    free(p);
}

static void calloc_case(size_t n, size_t m)
{
    errno = 4242;
    void *p = calloc(n, m);
    printf("calloc(%zu, %zu) = %s, errno %d\n", n, m, p ? "block" : "NULL", errno);
    free(p);
}

int main(void)
{
    memalign_case(0, 64);
    memalign_case(3, 64);
    memalign_case(24, 64);
    memalign_case(4, 64);
    memalign_case(16, 64);
    memalign_case(4096, 0);
    memalign_case(64, max_size - 4096);
    malloc_case(max_size);
    malloc_case(0);
    calloc_case(max_size / 2, 4);
    calloc_case(0, 8);
    calloc_case(1 << 20, 1);

    errno = 4242;
    char *p = realloc(NULL, 32);
    printf("realloc(NULL, 32) = %s, errno %d\n", p ? "block" : "NULL", errno);
    memset(p, 7, 32);
    errno = 4242;
    char *q = realloc(p, max_size - 64);
    printf("realloc(p, huge) = %s, errno %d, old block %s\n", q ? "block" : "NULL", errno,
           q == NULL && p[31] == 7 ? "intact" : "?");
    free(q ? q : p);

    errno = 4242;
    void *z = aligned_alloc(64, 256);
    printf("aligned_alloc(64, 256) = %s, aligned %d, errno %d\n", z ? "block" : "NULL",
           z ? ((uintptr_t)z % 64 == 0) : -1, errno);
    free(z);
    errno = 4242;
    free(NULL);
    printf("free(NULL): errno %d\n", errno);
    return 0;
}
