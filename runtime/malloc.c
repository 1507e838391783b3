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
 * scheduler needs a new thread. The real functions are the program's
 * allocator: the next definitions after this library's (hg_real), glibc's
 * or one the program links or preloads (jemalloc, tcmalloc). C++
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

#include <dlfcn.h>

extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

/* hg_real: the allocator the program has without the runtime, the next
 * definitions of these functions after this library's. Until 2026-11-29
 * the wrappers called glibc's __libc_* functions: a program linked with
 * jemalloc (Debian's redis-server) got glibc's blocks from malloc and
 * jemalloc's malloc_usable_size on them, and crashed at start-up; its
 * C++ deletes would have handed jemalloc's blocks to glibc. They are
 * resolved at the first call (other libraries' constructors allocate
 * before this library's run: libstdc++'s exception pool), with dlsym,
 * which may allocate itself: what is allocated while they are being
 * resolved comes from hg_boot, and is never given back. An allocator
 * missing one of the functions gives way to glibc's whole. */
static struct {
	void *(*malloc)(size_t);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	void (*free)(void *);
	void *(*memalign)(size_t, size_t);
	size_t (*usable)(void *);
} hg_real;
static int hg_real_state; /* 0 not resolved, 1 being resolved, 2 resolved */

/* hg_boot: the blocks allocated while hg_real is being resolved, each
 * after a 16-byte header that holds its size. */
static char hg_boot[256 << 10] __attribute__((aligned(16)));
static size_t hg_boot_used;

static void *hg_boot_alloc(size_t n, size_t align)
{
	if (align < 16)
		align = 16;
	if (n > sizeof hg_boot || align > 4096)
		return NULL;
	size_t need = (n + 16 + align - 1 + 15) & ~(size_t)15, at = __atomic_fetch_add(&hg_boot_used, need, __ATOMIC_RELAXED);
	if (at + need > sizeof hg_boot)
		return NULL;
	uintptr_t p = ((uintptr_t)hg_boot + at + 16 + align - 1) & ~(uintptr_t)(align - 1);
	((size_t *)p)[-1] = n;
	return (void *)p; /* zeroed memory, never reused: calloc's too */
}

static int hg_is_boot(const void *p)
{
	return (const char *)p >= hg_boot && (const char *)p < hg_boot + sizeof hg_boot;
}

static size_t hg_boot_size(const void *p) { return ((const size_t *)p)[-1]; }

/* hg_no_usable: no allocator's malloc_usable_size was found (a release
 * then checks no byte of its block as written). */
static size_t hg_no_usable(void *p __attribute__((unused))) { return 0; }

/* hg_real_ready resolves hg_real if no call is resolving it; 0 while one
 * is (the caller then takes its block from hg_boot). */
static int hg_real_ready(void)
{
	if (__atomic_load_n(&hg_real_state, __ATOMIC_ACQUIRE) == 2)
		return 1;
	int idle = 0;
	if (!__atomic_compare_exchange_n(&hg_real_state, &idle, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return 0;
	hg_real.malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
	hg_real.calloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
	hg_real.realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
	hg_real.free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
	hg_real.memalign = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "memalign");
	hg_real.usable = (size_t (*)(void *))dlsym(RTLD_NEXT, "malloc_usable_size");
	if (!hg_real.malloc || !hg_real.calloc || !hg_real.realloc || !hg_real.free || !hg_real.memalign ||
	    !hg_real.usable) {
		hg_real.malloc = __libc_malloc;
		hg_real.calloc = __libc_calloc;
		hg_real.realloc = __libc_realloc;
		hg_real.free = __libc_free;
		hg_real.memalign = __libc_memalign;
		void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
		hg_real.usable = libc ? (size_t (*)(void *))dlsym(libc, "malloc_usable_size") : NULL;
		if (!hg_real.usable)
			hg_real.usable = hg_no_usable;
	}
	__atomic_store_n(&hg_real_state, 2, __ATOMIC_RELEASE);
	return 1;
}

/* resolved as soon as this library's constructors run, for a program
 * whose first allocation comes later (a dl_iterate_phdr callback would
 * hold the loader's lock, which dlsym takes) */
__attribute__((constructor(101))) static void hg_real_resolve(void) { hg_real_ready(); }

/* The program's allocator runs with the thread's re-entrancy guard up
 * (hg_guard): what it calls that the runtime wraps passes straight
 * through, as glibc's allocator, whose locks are its own, never calls
 * anything wrapped. jemalloc takes its locks with pthread_mutex_lock: a
 * wrapper that called into Go from inside it (a lock-order check, a full
 * buffer) could have the Go runtime start a thread, whose argument it
 * allocates with malloc, and wait for a lock of jemalloc's that its own
 * thread held (redis-server hung at start-up so). */
static inline struct hg_thread *hg_guard(int32_t *was)
{
	struct hg_thread *t = hg_detect ? hg_current() : NULL;
	if (!t || t == &hg_overflow)
		return NULL;
	*was = t->in_rt;
	t->in_rt = 1;
	return t;
}

static inline void hg_unguard(struct hg_thread *t, int32_t was)
{
	if (t)
		t->in_rt = was;
}

#define HG_REAL(expr)                                  \
	({                                             \
		int32_t hg_was_ = 0;                   \
		struct hg_thread *hg_t_ = hg_guard(&hg_was_); \
		__typeof__(expr) hg_r_ = (expr);       \
		hg_unguard(hg_t_, hg_was_);            \
		hg_r_;                                 \
	})

/* hg_usable is malloc_usable_size for any block the wrappers gave out. */
static size_t hg_usable(void *p)
{
	if (hg_is_boot(p))
		return hg_boot_size(p);
	return hg_real_ready() ? HG_REAL(hg_real.usable(p)) : 0;
}

/* hg_real_free gives a block back to the program's allocator (a boot
 * block stays). */
static void hg_real_free(void *p)
{
	if (p && !hg_is_boot(p) && hg_real_ready()) {
		int32_t was = 0;
		struct hg_thread *t = hg_guard(&was);
		hg_real.free(p);
		hg_unguard(t, was);
	}
}

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
	if (hg_is_boot(p))
		return;
	size_t n = hg_usable(p);
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
	void *p = hg_real_ready() ? HG_REAL(hg_real.malloc(n)) : hg_boot_alloc(n, 16);
	hg_alloc(p, n, __builtin_return_address(0));
	return p;
}

void *calloc(size_t n, size_t m)
{
	if (m && n > (size_t)-1 / m) {
		errno = ENOMEM;
		return NULL;
	}
	void *p = hg_real_ready() ? HG_REAL(hg_real.calloc(n, m)) : hg_boot_alloc(n * m, 16);
	hg_alloc(p, n * m, __builtin_return_address(0));
	return p;
}

/* A realloc that fails leaves the old block to the program: it is a live
 * block again (its shadow reset, as a new one's), not a freed one whose
 * later accesses a report would place nowhere. A boot block moves to the
 * program's allocator. */
void *realloc(void *old, size_t n)
{
	void *ra = __builtin_return_address(0);
	if (old && hg_is_boot(old)) {
		void *p = hg_real_ready() ? HG_REAL(hg_real.malloc(n)) : hg_boot_alloc(n, 16);
		if (p) {
			size_t had = hg_boot_size(old);
			__builtin_memcpy(p, old, had < n ? had : n);
			hg_alloc(p, n, ra);
		}
		return p;
	}
	if (!hg_real_ready())
		return old ? NULL : hg_boot_alloc(n, 16);
	size_t had = old ? hg_usable(old) : 0;
	hg_release_block(old, ra);
	void *p = HG_REAL(hg_real.realloc(old, n));
	if (n != 0)
		hg_alloc(p ? p : old, p ? n : had, ra);
	return p;
}

void free(void *p)
{
	hg_release_block(p, __builtin_return_address(0));
	hg_real_free(p);
}

size_t malloc_usable_size(void *p) { return p ? hg_usable(p) : 0; }

static void *hg_memalign(size_t align, size_t n)
{
	return hg_real_ready() ? HG_REAL(hg_real.memalign(align, n)) : hg_boot_alloc(n, align);
}

void *memalign(size_t align, size_t n)
{
	void *p = hg_memalign(align, n);
	hg_alloc(p, n, __builtin_return_address(0));
	return p;
}

void *aligned_alloc(size_t align, size_t n)
{
	void *p = hg_memalign(align, n);
	hg_alloc(p, n, __builtin_return_address(0));
	return p;
}

int posix_memalign(void **out, size_t align, size_t n)
{
	if (align == 0 || align % sizeof(void *) != 0 || (align & (align - 1)) != 0)
		return EINVAL; /* glibc's checks */
	void *p = hg_memalign(align, n);
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
		hg_real_free(p);                                              \
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
