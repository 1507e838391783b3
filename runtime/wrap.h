/* wrap.h: what every file of interposed functions shares (wrappers.c,
 * fdsync.c): finding the real function, deciding whether a call is
 * tracked, and calling into Go with the re-entrancy guard up. */
#ifndef HG_WRAP_H
#define HG_WRAP_H
#include "rt_internal.h"

#include <dlfcn.h>

#include "_cgo_export.h"

/* hg_tracked returns the calling thread's record when the call must be
 * tracked: called by the program, and the thread may buffer events. */
static inline struct hg_thread *hg_tracked(void *ra)
{
	return hg_detect && !hg_from_runtime(ra) ? hg_bufferable() : NULL;
}

/* hg_active is hg_tracked for synchronisation calls: the thread's
 * buffered accesses go to the Go side first. */
static inline struct hg_thread *hg_active(void *ra)
{
	struct hg_thread *t = hg_tracked(ra);
	if (t)
		hg_flush(t);
	return t;
}

/* hg_parking is hg_active for calls that may block for long (sleeps,
 * yields, waits for descriptors: blocking.c), which synchronise nothing:
 * the flush only keeps the thread's accesses from waiting in its buffer,
 * unchecked, while it is parked, perhaps until the program exits. A
 * buffer of nothing the Go side must check (go_pending 0: ticks the C
 * side made, locks, allocations) waits for the next flush: a ticket
 * lock whose waiters yield until their turn made a call into Go at
 * every yield, 29 million in a run of 10 s (0.2 s natively). */
static inline void hg_parking(void *ra)
{
	struct hg_thread *t = hg_tracked(ra);
	if (t && (t->go_pending || t->sig_n || t->sig_acq))
		hg_flush(t);
}

/* The real function is resolved when the library is loaded (a
 * constructor): resolving it inside a call can deadlock, for instance in a
 * dl_iterate_phdr callback, where the loader's lock is held and dlsym needs
 * it. Each wrapper still calls resolve_<name> first, for calls made before
 * the constructor ran (other libraries' constructors). */
#define REAL(name) real_##name
#define DEFINE_REAL(ret, name, ...)                                   \
	static ret (*real_##name)(__VA_ARGS__);                         \
	static void resolve_##name(void)                                \
	{                                                               \
		if (!real_##name)                                       \
			real_##name = dlsym(RTLD_NEXT, #name);          \
	}                                                               \
	__attribute__((constructor)) static void preresolve_##name(void) { resolve_##name(); }

#define RA __builtin_return_address(0)

/* Go-side calls made with the re-entrancy guard up. What signal handlers
 * did while the wrapper's real function blocked (a handler run during
 * pthread_join) goes first: it came before the call. So do buffered
 * events while a segment the C side began waits in them for the Go side
 * to tick (regionpub.c): the call may tick the thread's clock too. */
#define GO(t, call)                            \
	do {                                   \
		if ((t)->c_ticked)             \
			hg_flush(t);           \
		else                           \
			hg_flush_signals(t);   \
		int hg_deferred_ = hg_go_enter(t); \
		(t)->go_calls++;               \
		call;                          \
		hg_go_leave(t, hg_deferred_);  \
	} while (0)

#endif
