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

struct hg_thread *hg_tracked(void *ra); /* wrappers.c */

static void hg_alloc(void *p, size_t n, void *ra)
{
	if (!p)
		return;
	struct hg_thread *t = hg_tracked(ra);
	if (!t)
		return;
	t->in_rt = 1;
	hgGoAlloc(t->tid, (GoUint64)(uintptr_t)p, (GoUint64)n, (GoUint64)(uintptr_t)ra);
	t->in_rt = 0;
}

static void hg_release_block(void *p, void *ra)
{
	if (!p)
		return;
	struct hg_thread *t = hg_tracked(ra);
	if (!t)
		return;
	t->in_rt = 1;
	hgGoFree(t->tid, (GoUint64)(uintptr_t)p, (GoUint64)malloc_usable_size(p), (GoUint64)(uintptr_t)ra);
	t->in_rt = 0;
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
