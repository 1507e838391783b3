/* bumpalloc.c: a replacement allocator in a shared library, as jemalloc
 * or tcmalloc are linked into programs (Debian's redis-server links
 * jemalloc): it defines malloc, free and the rest, hands out blocks from
 * its own arena after a header that marks them, and takes its lock with
 * pthread_mutex_lock, as jemalloc does. bump_owns tells whether a block
 * is one of its own. Freed blocks go on per-size free lists. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#define ARENA (256u << 20)
#define MAGIC 0x62756d70616c6c6fULL

struct head {
    uint64_t magic;
    size_t size;       /* bytes asked for */
    size_t room;       /* bytes after the header */
    struct head *next; /* free list */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char *arena;
static size_t used;
static struct head *free_lists[64];

static int class_of(size_t room)
{
    int c = 0;
    while ((size_t)16 << c < room)
        c++;
    return c;
}

static void *take(size_t n, size_t align)
{
    if (align < 16)
        align = 16;
    size_t room = n < 16 ? 16 : n;
    int c = class_of(room);
    room = (size_t)16 << c;
    pthread_mutex_lock(&lock);
    if (!arena) {
        void *m = mmap(NULL, ARENA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        arena = m == MAP_FAILED ? NULL : m;
    }
    struct head *h = NULL;
    if (align == 16 && free_lists[c]) {
        h = free_lists[c];
        free_lists[c] = h->next;
    } else if (arena) {
        uintptr_t at = ((uintptr_t)arena + used + sizeof(struct head) + align - 1) & ~(uintptr_t)(align - 1);
        size_t end = at + room - (uintptr_t)arena;
        if (end <= ARENA) {
            used = end;
            h = (struct head *)at - 1;
            h->room = room;
        }
    }
    pthread_mutex_unlock(&lock);
    if (!h) {
        errno = ENOMEM;
        return NULL;
    }
    h->magic = MAGIC;
    h->size = n;
    return h + 1;
}

int bump_owns(const void *p)
{
    return p && (const char *)p > arena && (const char *)p < arena + ARENA && ((const struct head *)p)[-1].magic == MAGIC;
}

void *malloc(size_t n) { return take(n, 16); }

void free(void *p)
{
    if (!p)
        return;
    struct head *h = (struct head *)p - 1;
    if (h->magic != MAGIC)
        __builtin_trap(); /* not a block of this allocator's */
    h->magic = 0;
    int c = class_of(h->room);
    pthread_mutex_lock(&lock);
    h->next = free_lists[c];
    free_lists[c] = h;
    pthread_mutex_unlock(&lock);
}

void *calloc(size_t n, size_t m)
{
    if (m && n > (size_t)-1 / m)
        return NULL;
    void *p = take(n * m, 16);
    if (p)
        memset(p, 0, n * m);
    return p;
}

size_t malloc_usable_size(void *p)
{
    if (!p)
        return 0;
    struct head *h = (struct head *)p - 1;
    if (h->magic != MAGIC)
        __builtin_trap();
    return h->room;
}

void *realloc(void *p, size_t n)
{
    if (!p)
        return malloc(n);
    size_t had = malloc_usable_size(p);
    if (n <= had) {
        ((struct head *)p - 1)->size = n;
        return p;
    }
    void *q = malloc(n);
    if (q) {
        memcpy(q, p, had);
        free(p);
    }
    return q;
}

void *memalign(size_t align, size_t n) { return take(n, align); }
void *aligned_alloc(size_t align, size_t n) { return take(n, align); }

int posix_memalign(void **out, size_t align, size_t n)
{
    void *p = take(n, align);
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}
