/* malloc.c: interposed allocation functions.
 *
 * A new block's shadow is reset (so that memory reused by malloc does not
 * carry a previous owner's history) and its allocation site is recorded for
 * reports; a released block's shadow is reset too. The reset happens at
 * once, in C (hg_reset_cells), and nothing here calls into Go: malloc and
 * free run inside glibc's own locked sections (for example the thread stack
 * cache while a thread exits), where a Go call can deadlock when the Go
 * scheduler needs a new thread. The real functions are glibc's __libc_*
 * entry points, which need no dlsym (dlsym itself may allocate). C++
 * operator new and delete call these.
 */
#define _GNU_SOURCE
#include "hgrt.h"

#include <errno.h>
#include <malloc.h>
#include <stddef.h>
#include <stdlib.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);

/* hg_heap_event resets a block's shadow and records the event for reports
 * (buffered; never flushed from inside a library). */
static void hg_heap_event(void *p, size_t n, uint32_t flag, void *ra)
{
	if (!p || !hg_detect)
		return;
	hg_reset_cells((uint64_t)(uintptr_t)p, n);
	struct hg_thread *t = hg_bufferable();
	if (!t)
		return;
	uint64_t pc = hg_link_pc(ra);
	hg_event(t, (uint64_t)(uintptr_t)p, (uint64_t)(uint32_t)pc | (uint64_t)(flag | HG_RESET_DONE) << 48, n, pc != 0);
}

static void hg_alloc(void *p, size_t n, void *ra)
{
	hg_heap_event(p, n, HG_ALLOC, ra);
}

/* The release is not checked as a write to the block: that would need the
 * Go side here. */
static void hg_release_block(void *p, void *ra)
{
	if (p)
		hg_heap_event(p, malloc_usable_size(p), HG_FREE, ra);
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
	hg_release_block(old, ra);
	void *p = __libc_realloc(old, n);
	if (n != 0)
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
