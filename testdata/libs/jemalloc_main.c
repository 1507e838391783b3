/* jemalloc_main.c: a program linked with jemalloc (as Debian's
 * redis-server is). Threads allocate, grow, hand over and free blocks;
 * the C library allocates for it too (strdup, getline); mallctl, which
 * only jemalloc has, reports the blocks jemalloc gave out, so a rewritten
 * program whose blocks came from another allocator prints a different
 * line (or crashes in jemalloc's free). */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int mallctl(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen);

#define THREADS 4
#define ROUNDS 2000

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static char *shelf[THREADS];

static void *worker(void *arg)
{
    long id = (long)arg;
    for (int r = 0; r < ROUNDS; r++) {
        size_t n = 16 + (size_t)((r * 37 + id * 11) % 500);
        char *b = malloc(n);
        memset(b, (int)id, n);
        b = realloc(b, 2 * n);
        free(strdup("hand me over"));
        void *a = NULL;
        if (posix_memalign(&a, 64, 100) == 0)
            free(a);
        pthread_mutex_lock(&mu);
        char *old = shelf[(id + 1) % THREADS];
        shelf[(id + 1) % THREADS] = b;
        pthread_mutex_unlock(&mu);
        if (old && malloc_usable_size(old) < 32)
            abort();
        free(old);
    }
    return NULL;
}

int main(void)
{
    char *line = NULL;
    size_t cap = 0;
    FILE *f = fopen("/proc/self/status", "r");
    if (f) {
        if (getline(&line, &cap, f) < 0)
            return 2;
        fclose(f);
    }
    free(line);
    pthread_t t[THREADS];
    for (long i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < THREADS; i++)
        free(shelf[i]);
    const char *version = "none";
    size_t len = sizeof version;
    int r = mallctl("version", &version, &len, NULL, 0);
    printf("jemalloc: %s\n", r == 0 ? "in use" : "not answering");
    return r != 0;
}
