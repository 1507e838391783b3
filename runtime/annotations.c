/* annotations.c: what programs tell race detectors about their own
 * synchronisation, in the two forms real projects ship:
 *
 *   - ThreadSanitizer's dynamic-annotation functions (AnnotateHappensBefore
 *     and the others of dynamic_annotations.h). A program not built with
 *     -fsanitize=thread defines them itself, usually empty and weak, and
 *     calls them directly: the rewriter hooks those calls (rewrite,
 *     annotations.go; abi.HookAnnotate) and they arrive here through the
 *     access entry point (hg_annotate_hook). A program or library that
 *     imports them instead binds to the definitions at the end of this
 *     file, since the runtime is the first library the program loads.
 *   - Valgrind client requests (valgrind.h, helgrind.h, drd.h): the magic
 *     instruction sequence, hooked by the rewriter at its xchg
 *     (abi.HookRequest). The requests of Helgrind and DRD that describe
 *     synchronisation or benign races are followed; every other request,
 *     RUNNING_ON_VALGRIND included, is answered with its default, as on
 *     the bare machine: the program keeps its native behaviour.
 *
 * What each annotation does (docs/detector.md, "Annotations"):
 * happens-before and happens-after are a release and an acquire on the
 * address, as sem_post and sem_wait are (wrappers.c); a benign race is a
 * range whose races are not reported (runtime/detect/benign.go); the ignore
 * sections make the fast path skip the thread's plain reads or writes
 * (hg_ignored, hgrt.h); new memory has its shadow reset, as a fresh heap
 * block; annotated reader-writer locks and condition variables are
 * releases and acquires too (hg_rwlock_acquired).
 */
#define _GNU_SOURCE
#include "rt_internal.h"
#include "wrap.h"

/* A reader's release of an annotated reader-writer lock goes to a key of
 * its own, which writers acquire and readers do not: as in
 * ThreadSanitizer, readers are ordered after writers and writers after
 * everyone, but readers not after each other. Addresses never have the
 * top bit set. */
static uint64_t hg_readers_key(uint64_t lock)
{
	return lock | 1ull << 63;
}

static void hg_rwlock_acquired(struct hg_thread *t, uint64_t lock, int write)
{
	hg_d_acquire(t->tid, lock);
	if (write)
		hg_d_acquire(t->tid, hg_readers_key(lock));
}

/* hg_ignore_step opens or closes one of the thread's ignore sections. They
 * nest; an end without a begin is dropped. General registers only: it is
 * called from the entry point's hook. */
__attribute__((target("general-regs-only"))) static void hg_ignore_step(struct hg_thread *t, uint32_t kind)
{
	switch (kind) {
	case HG_ANN_IGNORE_READS_BEGIN:
		t->ignore_reads++;
		break;
	case HG_ANN_IGNORE_READS_END:
		t->ignore_reads -= t->ignore_reads > 0;
		break;
	case HG_ANN_IGNORE_WRITES_BEGIN:
		t->ignore_writes++;
		break;
	case HG_ANN_IGNORE_WRITES_END:
		t->ignore_writes -= t->ignore_writes > 0;
		break;
	}
	t->ignore = (t->ignore_reads > 0 ? HG_READ : 0) | (t->ignore_writes > 0 ? HG_WRITE : 0);
}

__attribute__((target("general-regs-only"))) static int hg_is_ignore_step(uint32_t kind)
{
	return kind >= HG_ANN_IGNORE_READS_BEGIN && kind <= HG_ANN_IGNORE_WRITES_END;
}

/* hg_annotate applies annotation kind (HG_ANN_*) with the arguments a of
 * ThreadSanitizer's function: file, line, then the rest. The thread's
 * buffered events are with the Go side already, and in_rt is set. */
static void hg_annotate(struct hg_thread *t, uint32_t kind, const uint64_t *a)
{
	switch (kind) {
	case HG_ANN_HAPPENS_BEFORE:
	case HG_ANN_CONDVAR_SIGNAL:
		hg_d_release(t->tid, a[2]);
		break;
	case HG_ANN_HAPPENS_AFTER:
	case HG_ANN_CONDVAR_WAIT:
		hg_d_acquire(t->tid, a[2]);
		break;
	case HG_ANN_BENIGN_RACE_SIZED:
		hg_d_benign(a[2], a[3], 1);
		break;
	case HG_ANN_BENIGN_RACE:
		hg_d_benign(a[2], 1, 1);
		break;
	case HG_ANN_RWLOCK_ACQUIRED:
		hg_rwlock_acquired(t, a[2], a[3] != 0);
		break;
	case HG_ANN_RWLOCK_RELEASED:
		hg_d_release(t->tid, a[3] ? a[2] : hg_readers_key(a[2]));
		break;
	case HG_ANN_NEW_MEMORY:
		hg_reset_heap_cells(a[2], a[3]); /* as a fresh heap block's (malloc.c) */
		break;
	default:
		if (hg_is_ignore_step(kind))
			hg_ignore_step(t, kind);
	}
}

/* ---- Valgrind client requests ----
 * The request codes, from valgrind.h, helgrind.h and drd.h (their values
 * are the tools' ABI: fixed). A request block is six words: the code,
 * then five arguments. */
enum {
	HG_VG_HG_CLEAN_MEMORY = 0x48470000,	   /* Helgrind and DRD: (addr, len) */
	HG_VG_HG_RWLOCK_ACQUIRED = 0x48470111,	   /* Helgrind and DRD: (lock, is_w) */
	HG_VG_HG_RWLOCK_RELEASED = 0x48470112,	   /* Helgrind: (lock); DRD: (lock, is_w) */
	HG_VG_HG_SEM_RELEASED = 0x48470116,	   /* VALGRIND_HG_SEM_POST_PRE: (sem) */
	HG_VG_HG_SEM_ACQUIRED = 0x48470117,	   /* VALGRIND_HG_SEM_WAIT_POST: (sem) */
	HG_VG_HG_USERSO_SEND_PRE = 0x48470121,	   /* ANNOTATE_HAPPENS_BEFORE (both tools): (obj) */
	HG_VG_HG_USERSO_RECV_POST = 0x48470122,	   /* ANNOTATE_HAPPENS_AFTER: (obj) */
	HG_VG_HG_ARANGE_UNTRACKED = 0x48470127,	   /* VALGRIND_HG_DISABLE_CHECKING: (addr, len) */
	HG_VG_HG_ARANGE_TRACKED = 0x48470128,	   /* VALGRIND_HG_ENABLE_CHECKING: (addr, len) */
	HG_VG_DRD_START_SUPPRESSION = 0x44520002,  /* DRD's ANNOTATE_BENIGN_RACE_SIZED: (addr, len) */
	HG_VG_DRD_FINISH_SUPPRESSION = 0x44520003, /* DRD_STOP_IGNORING_VAR: (addr, len) */
	HG_VG_DRD_RECORD_LOADS = 0x44520006,	   /* (0: ignore reads from now on, 1: check them again) */
	HG_VG_DRD_RECORD_STORES = 0x44520007,	   /* the same for writes */
	HG_VG_DRD_SEM_WAIT_POST = 0x4452000d,	   /* (sem) */
	HG_VG_DRD_SEM_POST_PRE = 0x4452000e,	   /* (sem) */
};

/* hg_request_kind is the annotation a request amounts to, with its
 * arguments moved to where the annotation's function has them (a[2] on);
 * 0 for a request that changes nothing here. General registers only. */
__attribute__((target("general-regs-only"))) static uint32_t hg_request_kind(const uint64_t *req, uint64_t *a)
{
	a[2] = req[1];
	a[3] = req[2];
	switch (req[0]) {
	case HG_VG_HG_USERSO_SEND_PRE:
	case HG_VG_HG_SEM_RELEASED:
	case HG_VG_DRD_SEM_POST_PRE:
		return HG_ANN_HAPPENS_BEFORE;
	case HG_VG_HG_USERSO_RECV_POST:
	case HG_VG_HG_SEM_ACQUIRED:
	case HG_VG_DRD_SEM_WAIT_POST:
		return HG_ANN_HAPPENS_AFTER;
	case HG_VG_HG_CLEAN_MEMORY:
		return HG_ANN_NEW_MEMORY;
	case HG_VG_HG_ARANGE_UNTRACKED:
	case HG_VG_DRD_START_SUPPRESSION:
		return HG_ANN_BENIGN_RACE_SIZED;
	case HG_VG_HG_RWLOCK_ACQUIRED:
		return HG_ANN_RWLOCK_ACQUIRED;
	case HG_VG_HG_RWLOCK_RELEASED:
		/* Helgrind passes no mode: a release in write mode, which
		 * orders more, never less */
		a[3] = 1;
		return HG_ANN_RWLOCK_RELEASED;
	case HG_VG_DRD_RECORD_LOADS:
		return req[1] ? HG_ANN_IGNORE_READS_END : HG_ANN_IGNORE_READS_BEGIN;
	case HG_VG_DRD_RECORD_STORES:
		return req[1] ? HG_ANN_IGNORE_WRITES_END : HG_ANN_IGNORE_WRITES_BEGIN;
	}
	return 0;
}

/* hg_untrack withdraws a benign range (Helgrind's ENABLE_CHECKING, DRD's
 * FINISH_SUPPRESSION), which no annotation function does. */
__attribute__((target("general-regs-only"))) static int hg_is_untrack(uint64_t code)
{
	return code == HG_VG_HG_ARANGE_TRACKED || code == HG_VG_DRD_FINISH_SUPPRESSION;
}

/* ---- from the entry point: hooked calls and requests ---- */

/* hg_annotate_saved: hg_annotate from the hook, inside hg_call_saving.
 * regs are the argument registers the call passed. */
static void hg_annotate_saved(struct hg_thread *t, uint64_t *regs, uint64_t info)
{
	hg_annotate(t, HG_INFO_PC(info), regs);
}

/* hg_request_saved: a request from the hook, inside hg_call_saving. regs
 * hold the request block's address, then the result (left as it is: no
 * request followed here returns a value). */
static void hg_request_saved(struct hg_thread *t, uint64_t *regs, uint64_t info)
{
	(void)info;
	const uint64_t *req = (const uint64_t *)(uintptr_t)regs[0];
	uint64_t a[5] = {0};
	if (hg_is_untrack(req[0])) {
		hg_d_benign(req[1], req[2], 0);
		return;
	}
	uint32_t kind = hg_request_kind(req, a);
	if (kind)
		hg_annotate(t, kind, a);
}

/* hg_annotate_hook is the hook of a hooked annotation call or client
 * request (fastpath.c, hg_access_slow). Ignore sections change only the
 * thread's record, here; everything else goes through hg_call_saving,
 * which hands the thread's buffered accesses over first, so that each
 * stays on its side of the edge. Inside a signal handler, or inside the
 * runtime, annotations are dropped. */
HG_SLOW void hg_annotate_hook(struct hg_thread *t, uint64_t addr, uint64_t info)
{
	if (!hg_detect || t->in_rt || t->tid < 0 || t->sig_depth > 0)
		return;
	uint64_t *regs = (uint64_t *)(uintptr_t)addr;
	if ((HG_INFO_SIZE(info) & 0xff) == HG_HOOK_ANNOTATE) {
		if (hg_is_ignore_step(HG_INFO_PC(info)))
			hg_ignore_step(t, HG_INFO_PC(info));
		else
			hg_call_saving(t, hg_annotate_saved, regs, info);
		return;
	}
	const uint64_t *req = (const uint64_t *)(uintptr_t)regs[0];
	uint64_t a[5];
	uint32_t kind = hg_request_kind(req, a);
	if (hg_is_ignore_step(kind))
		hg_ignore_step(t, kind);
	else if (kind || hg_is_untrack(req[0]))
		hg_call_saving(t, hg_request_saved, regs, info);
}

/* ---- the functions themselves, for callers that import them ----
 * A program that calls them through the PLT, or a library that does,
 * binds to these (the runtime is the first library loaded); a program
 * that defines them keeps its own, whose calls the rewriter hooks. Calls
 * from inside the runtime pass through (hg_active). */

static void hg_annotate_call(void *ra, uint32_t kind, uint64_t a2, uint64_t a3, uint64_t a4)
{
	struct hg_thread *t = hg_active(ra);
	if (!t)
		return;
	uint64_t a[5] = {0, 0, a2, a3, a4};
	int deferred = hg_go_enter(t);
	hg_annotate(t, kind, a);
	hg_go_leave(t, deferred);
}

#define ADDR(p) ((uint64_t)(uintptr_t)(p))

void AnnotateHappensBefore(const char *file, int line, const volatile void *addr)
{
	(void)file, (void)line;
	hg_annotate_call(RA, HG_ANN_HAPPENS_BEFORE, ADDR(addr), 0, 0);
}

void AnnotateHappensAfter(const char *file, int line, const volatile void *addr)
{
	(void)file, (void)line;
	hg_annotate_call(RA, HG_ANN_HAPPENS_AFTER, ADDR(addr), 0, 0);
}

void AnnotateBenignRaceSized(const char *file, int line, const volatile void *addr, long size, const char *desc)
{
	(void)file, (void)line;
	hg_annotate_call(RA, HG_ANN_BENIGN_RACE_SIZED, ADDR(addr), (uint64_t)size, ADDR(desc));
}

void AnnotateBenignRace(const char *file, int line, const volatile void *addr, const char *desc)
{
	(void)file, (void)line;
	hg_annotate_call(RA, HG_ANN_BENIGN_RACE, ADDR(addr), ADDR(desc), 0);
}

/* The ignore sections need no flush: they change what the thread's next
 * accesses do, not what its buffered ones did. */
static void hg_ignore_call(void *ra, uint32_t kind)
{
	struct hg_thread *t = hg_tracked(ra);
	if (t)
		hg_ignore_step(t, kind);
}

void AnnotateIgnoreReadsBegin(const char *file, int line)
{
	(void)file, (void)line;
	hg_ignore_call(RA, HG_ANN_IGNORE_READS_BEGIN);
}

void AnnotateIgnoreReadsEnd(const char *file, int line)
{
	(void)file, (void)line;
	hg_ignore_call(RA, HG_ANN_IGNORE_READS_END);
}

void AnnotateIgnoreWritesBegin(const char *file, int line)
{
	(void)file, (void)line;
	hg_ignore_call(RA, HG_ANN_IGNORE_WRITES_BEGIN);
}

void AnnotateIgnoreWritesEnd(const char *file, int line)
{
	(void)file, (void)line;
	hg_ignore_call(RA, HG_ANN_IGNORE_WRITES_END);
}

void AnnotateRWLockAcquired(const char *file, int line, const volatile void *lock, long is_w)
{
	(void)file, (void)line;
	hg_annotate_call(RA, HG_ANN_RWLOCK_ACQUIRED, ADDR(lock), (uint64_t)is_w, 0);
}

void AnnotateRWLockReleased(const char *file, int line, const volatile void *lock, long is_w)
{
	(void)file, (void)line;
	hg_annotate_call(RA, HG_ANN_RWLOCK_RELEASED, ADDR(lock), (uint64_t)is_w, 0);
}

void AnnotateNewMemory(const char *file, int line, const volatile void *addr, long size)
{
	(void)file, (void)line;
	hg_annotate_call(RA, HG_ANN_NEW_MEMORY, ADDR(addr), (uint64_t)size, 0);
}

void AnnotateCondVarSignal(const char *file, int line, const volatile void *cv)
{
	(void)file, (void)line;
	hg_annotate_call(RA, HG_ANN_CONDVAR_SIGNAL, ADDR(cv), 0, 0);
}

void AnnotateCondVarSignalAll(const char *file, int line, const volatile void *cv)
{
	(void)file, (void)line;
	hg_annotate_call(RA, HG_ANN_CONDVAR_SIGNAL, ADDR(cv), 0, 0);
}

void AnnotateCondVarWait(const char *file, int line, const volatile void *cv, const volatile void *lock)
{
	(void)file, (void)line;
	hg_annotate_call(RA, HG_ANN_CONDVAR_WAIT, ADDR(cv), ADDR(lock), 0);
}

/* Recognised, and nothing to do: locks are not happens-before here except
 * where docs/detector.md says, and an annotated lock needs no set-up. */
void AnnotateRWLockCreate(const char *file, int line, const volatile void *lock)
{
	(void)file, (void)line, (void)lock;
}

void AnnotateRWLockDestroy(const char *file, int line, const volatile void *lock)
{
	(void)file, (void)line, (void)lock;
}

void AnnotateMutexIsNotPHB(const char *file, int line, const volatile void *mu)
{
	(void)file, (void)line, (void)mu;
}
