/* malloc.c: interposed allocation functions.
 *
 * A new block's shadow is reset (so that memory reused by malloc does not
 * carry a previous owner's history) and its allocation site is recorded for
 * reports; free is a write to the block (freeing memory another thread
 * still uses without synchronisation is a race), then the shadow is reset.
 * The real functions are glibc's __libc_* entry points, which need no dlsym
 * (dlsym itself may allocate). C++ operator new and delete call these.
 */
#define _GNU_SOURCE
#include "hgrt.h"

#include <errno.h>
#include <malloc.h>
#include <stddef.h>
#include <stdlib.h>

#include "_cgo_export.h"

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);

uint64_t hg_link_pc(void *ra);          /* wrappers.c */

static void hg_heap_event(struct hg_thread *t, void *p, size_t n, uint32_t flag, void *ra)
{
	hg_event(t, (uint64_t)(uintptr_t)p, (uint64_t)(uint32_t)hg_link_pc(ra) | (uint64_t)flag << 48, n);
}

/* An allocation needs no flush: whoever freed the memory before has had its
 * release handled already (see hg_release_block). */
static void hg_alloc(void *p, size_t n, void *ra)
{
	if (!p || !hg_detect)
		return;
	struct hg_thread *t = hg_current();
	if (t->in_rt || t->tid < 0 || !t->buf)
		return;
	hg_heap_event(t, p, n, HG_ALLOC, ra);
}

/* A release is handled at once, so that a thread that gets the memory next
 * from malloc finds its shadow reset. */
static void hg_release_block(void *p, void *ra)
{
	if (!p || !hg_detect)
		return;
	struct hg_thread *t = hg_current();
	if (t->in_rt || t->tid < 0 || !t->buf)
		return;
	hg_heap_event(t, p, malloc_usable_size(p), HG_FREE, ra);
	hg_flush(t);
}

void *malloc(size_t n)
{
	void *p = __libc_malloc(n);
	hg_alloc(p, n, __builtin_return_address(0));
	return p;
}

void *calloc(size_t n, size_t m)
{
	void *p = __libc_calloc(n, m);
	hg_alloc(p, n * m, __builtin_return_address(0));
	return p;
}

void *realloc(void *old, size_t n)
{
	void *ra = __builtin_return_address(0);
	if (old && n == 0) {
		hg_release_block(old, ra);
		return __libc_realloc(old, n);
	}
	/* The old block is read (its contents move) and released. */
	hg_release_block(old, ra);
	void *p = __libc_realloc(old, n);
	hg_alloc(p, n, ra);
	return p;
}

void free(void *p)
{
	hg_release_block(p, __builtin_return_address(0));
	__libc_free(p);
}

void *memalign(size_t align, size_t n)
{
	void *p = __libc_memalign(align, n);
	hg_alloc(p, n, __builtin_return_address(0));
	return p;
}

void *aligned_alloc(size_t align, size_t n)
{
	void *p = __libc_memalign(align, n);
	hg_alloc(p, n, __builtin_return_address(0));
	return p;
}

int posix_memalign(void **out, size_t align, size_t n)
{
	if (align % sizeof(void *) != 0 || (align & (align - 1)) != 0)
		return EINVAL;
	void *p = __libc_memalign(align, n);
	if (!p)
		return ENOMEM;
	hg_alloc(p, n, __builtin_return_address(0));
	*out = p;
	return 0;
}
