/* malloc.c: interposed allocation functions.
 *
 * It owns the wrappers of malloc, calloc, realloc, free, memalign,
 * aligned_alloc, posix_memalign and C++ operator new and delete, and the
 * heap events they buffer. The shadow reset itself is shadow.c's.
 *
 * A new block's shadow is reset (so that memory reused by malloc does not
 * carry a previous owner's history) and its allocation site is recorded for
 * reports; a released block's shadow is reset too. The reset happens at
 * once, in C (hg_reset_heap_cells, shadow.c), and nothing here calls into Go: malloc and
 * free run inside glibc's own locked sections (for example the thread stack
 * cache while a thread exits), where a Go call can deadlock when the Go
 * scheduler needs a new thread. The real functions are glibc's __libc_*
 * entry points, which need no dlsym (dlsym itself may allocate). C++
 * operator new and delete are wrapped too, so that the program's call site
 * (not libstdc++) is the allocation site and a delete is checked as a write.
 */
#define _GNU_SOURCE
#include "rt_internal.h"

#include <errno.h>
#include <malloc.h>
#include <stddef.h>
#include <stdlib.h>

#include "_cgo_export.h"

extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

/* hg_heap_event resets a block's shadow and records the event for reports
 * (buffered; never flushed from inside a library). */
static void hg_heap_event(void *p, size_t n, uint32_t flag, void *ra)
{
	if (!p || !hg_detect)
		return;
	hg_reset_heap_cells((uint64_t)(uintptr_t)p, n);
	struct hg_thread *t = hg_bufferable();
	if (!t)
		return;
	uint64_t pc = hg_call_pc(ra);
	hg_event(t, (uint64_t)(uintptr_t)p, HG_INFO(pc, 0, flag | HG_RESET_DONE), n, pc != 0);
}

static void hg_alloc(void *p, size_t n, void *ra)
{
	hg_heap_event(p, n, HG_ALLOC, ra);
}

/* hg_only_heap_events: the thread's buffer holds nothing but allocations
 * and releases whose shadow was reset already (hg_heap_event), which the
 * Go side records without looking at cells; a few of them are looked at,
 * more count as something else. */
static int hg_only_heap_events(const struct hg_thread *t)
{
	if (t->n > 64)
		return 0;
	for (uint32_t i = 0; i < t->n; i++) {
		uint32_t flags = HG_INFO_FLAGS(t->buf[i].info);
		if (!(flags & (HG_ALLOC | HG_FREE)) || !(flags & HG_RESET_DONE))
			return 0;
	}
	return 1;
}

/* A release called by the program itself is a write to the block (a free
 * racing with another thread's use of the block is a race): the thread's
 * buffered accesses go to the Go side first, then the free is checked and
 * the shadow reset there. The program holds no glibc lock at that point.
 * Releases from inside libraries only reset the shadow (see above). */
static void hg_release_block(void *p, void *ra)
{
	if (!p || !hg_detect)
		return;
	size_t n = malloc_usable_size(p);
	hg_spin_forget((uint64_t)(uintptr_t)p, n);
	uint64_t pc = hg_call_pc(ra);
	struct hg_thread *t = pc ? hg_bufferable() : NULL;
	if (!t) {
		hg_heap_event(p, n, HG_FREE, ra);
		return;
	}
	uint64_t check = n < HG_FREE_CHECK ? n : HG_FREE_CHECK;
	if ((!t->go_pending || hg_only_heap_events(t)) && t->sig_n == 0 && !t->recording && !t->want_stack &&
	    hg_release_settled(t, (uint64_t)(uintptr_t)p, check, pc) == check) {
		/* The fast path found the release's write to the block racing
		 * with nothing (the thread's own block, or one handed to it):
		 * no access waits in the buffer for cells this reset would
		 * clear, no region needs the hand-off look-up, so the release
		 * is left to go as a library's does. Until 2026-11-27 the
		 * buffer had to be empty, and it held the previous release:
		 * a program freeing a tree called into Go at every other free
		 * (bench/calls.c, 131 thousand calls). */
		hg_heap_event(p, n, HG_FREE, ra);
		return;
	}
	hg_flush(t);
	int deferred = hg_go_enter(t);
	t->go_calls++;
	if (hg_d_free(t->tid, (GoUint64)(uintptr_t)p, n, pc) > 0)
		t->want_stack = 1;
	hg_go_leave(t, deferred);
	hg_flush(t); /* the stack for a report on the release */
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

/* A realloc that fails leaves the old block to the program: it is a live
 * block again (its shadow reset, as a new one's), not a freed one whose
 * later accesses a report would place nowhere. */
void *realloc(void *old, size_t n)
{
	void *ra = __builtin_return_address(0);
	size_t had = old ? malloc_usable_size(old) : 0;
	hg_release_block(old, ra);
	void *p = __libc_realloc(old, n);
	if (n != 0)
		hg_alloc(p ? p : old, p ? n : had, ra);
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
	if (align == 0 || align % sizeof(void *) != 0 || (align & (align - 1)) != 0)
		return EINVAL; /* glibc's checks */
	void *p = __libc_memalign(align, n);
	if (!p)
		return ENOMEM;
	hg_alloc(p, n, __builtin_return_address(0));
	*out = p;
	return 0;
}

/* C++ operator new and delete (the plain and sized forms). The real
 * operators come from libstdc++ through dlsym: new must throw bad_alloc as
 * libstdc++ does. The block is recorded here with the program's call site;
 * libstdc++'s own call to malloc/free records it once more from inside a
 * library, which changes nothing. */
#include <dlfcn.h>

#define CXX_NEW(sym)                                                          \
	static void *(*real_##sym)(size_t);                                   \
	static void resolve_##sym(void)                                       \
	{                                                                     \
		if (!real_##sym)                                              \
			real_##sym = (void *(*)(size_t))dlsym(RTLD_NEXT, #sym); \
	}                                                                     \
	/* at load time, as wrap.h's DEFINE_REAL */                           \
	__attribute__((constructor)) static void preresolve_##sym(void) { resolve_##sym(); } \
	void *sym(size_t n)                                                   \
	{                                                                     \
		resolve_##sym();                                              \
		void *p = real_##sym(n);                                      \
		hg_alloc(p, n, __builtin_return_address(0));                  \
		return p;                                                     \
	}

#define CXX_DELETE(sym, ...)                                                  \
	void sym(void *p __VA_ARGS__)                                         \
	{                                                                     \
		hg_release_block(p, __builtin_return_address(0));             \
		__libc_free(p);                                               \
	}

/* the aligned forms (C++17 over-aligned types): operator new(size_t,
 * std::align_val_t) and its array form */
#define CXX_NEW_ALIGNED(sym)                                                  \
	static void *(*real_##sym)(size_t, size_t);                           \
	static void resolve_##sym(void)                                       \
	{                                                                     \
		if (!real_##sym)                                              \
			real_##sym = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, #sym); \
	}                                                                     \
	__attribute__((constructor)) static void preresolve_##sym(void) { resolve_##sym(); } \
	void *sym(size_t n, size_t align)                                     \
	{                                                                     \
		resolve_##sym();                                              \
		void *p = real_##sym(n, align);                               \
		hg_alloc(p, n, __builtin_return_address(0));                  \
		return p;                                                     \
	}

CXX_NEW(_Znwm)
CXX_NEW(_Znam)
CXX_NEW_ALIGNED(_ZnwmSt11align_val_t)
CXX_NEW_ALIGNED(_ZnamSt11align_val_t)
CXX_DELETE(_ZdlPv)
CXX_DELETE(_ZdaPv)
CXX_DELETE(_ZdlPvm, , size_t n __attribute__((unused)))
CXX_DELETE(_ZdaPvm, , size_t n __attribute__((unused)))
/* the aligned forms release with free too: libstdc++'s aligned new uses
 * aligned_alloc */
CXX_DELETE(_ZdlPvSt11align_val_t, , size_t a __attribute__((unused)))
CXX_DELETE(_ZdaPvSt11align_val_t, , size_t a __attribute__((unused)))
CXX_DELETE(_ZdlPvmSt11align_val_t, , size_t n __attribute__((unused)), size_t a __attribute__((unused)))
CXX_DELETE(_ZdaPvmSt11align_val_t, , size_t n __attribute__((unused)), size_t a __attribute__((unused)))
