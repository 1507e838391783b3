/* allocator_main.c: a program linked with an allocator of its own:
 * bumpalloc.c (built with -DBUMPALLOC), or jemalloc (-DJEMALLOC, as
 * Debian's redis-server is). Threads allocate blocks, hand them to each
 * other through a mutex-protected queue, grow them with realloc and free
 * them; the C library allocates for it too (strdup, getline, fopen's
 * buffer). Every block must come from the program's allocator, rewritten
 * or not: with bumpalloc the program checks each one (bump_owns) and the
 * allocator traps on a block that is not its own; jemalloc crashes in
 * its free on a foreign block, and mallctl, which only jemalloc has,
 * must answer at the end. Prints the same line in every run. */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef BUMPALLOC
int bump_owns(const void *p);
#define OWNED(p) bump_owns(p)
#else
int mallctl(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen);
#define OWNED(p) (malloc_usable_size((void *)(p)) > 0)
#endif

#define THREADS 4
#define ROUNDS 2000
#define CAP 64

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static char *queue[CAP];
static int count;
static long foreign, checked;

static void check(const void *p)
{
    __atomic_add_fetch(&checked, 1, __ATOMIC_RELAXED);
    if (!OWNED(p))
        __atomic_add_fetch(&foreign, 1, __ATOMIC_RELAXED);
}

static void *worker(void *arg)
{
    long id = (long)arg;
    for (int r = 0; r < ROUNDS; r++) {
        size_t n = 16 + (size_t)((r * 37 + id * 11) % 500);
        char *b = malloc(n);
        check(b);
        memset(b, (int)id, n);
        b = realloc(b, 2 * n);
        check(b);
        char *s = strdup("hand me over");
        check(s);
        free(s);
        void *a = NULL;
        if (posix_memalign(&a, 64, 100) == 0) {
            check(a);
            free(a);
        }
        pthread_mutex_lock(&mu);
        char *old = count == CAP ? queue[--count] : NULL;
        queue[count++] = b;
        if (count > 1 && r % 3 == 0)
            old = old ? old : queue[--count];
        pthread_mutex_unlock(&mu);
        if (old) {
            check(old);
            free(old);
        }
    }
    return NULL;
}

int main(void)
{
    char *line = NULL;
    size_t cap = 0;
    FILE *f = fopen("/proc/self/status", "r");
    if (f) {
        if (getline(&line, &cap, f) > 0)
            check(line);
        fclose(f);
    }
    free(line);
    pthread_t t[THREADS];
    for (long i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    while (count > 0)
        free(queue[--count]);
#ifdef JEMALLOC
    const char *version = "none";
    size_t len = sizeof version;
    if (mallctl("version", &version, &len, NULL, 0) != 0)
        foreign++;
#endif
    printf("blocks checked: %s, not the program's allocator's: %ld\n", checked > 0 ? "some" : "none", foreign);
    return foreign != 0;
}
