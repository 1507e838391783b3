/* wrappers.c: interposed synchronisation functions.
 *
 * It owns the wrappers of pthread_create/join/exit, the thread-naming calls
 * (pthread_setname_np, prctl PR_SET_NAME), the mutex, spin and
 * rwlock functions, condition variables, semaphores, barriers,
 * __cxa_guard_* and pthread_once, and the check every wrapper starts with
 * (hg_tracked, hg_active in wrap.h). Which code a return address belongs
 * to is ranges.c's; file descriptors and futexes are fdsync.c's.
 *
 * The runtime library is the first DT_NEEDED of every rewritten program, so
 * these definitions win over libc's for the whole process (libstdc++
 * included), as LD_PRELOAD would; the real functions come from
 * dlsym(RTLD_NEXT). The Go runtime inside this library calls some of them
 * too (the library is linked -Bsymbolic): calls whose return address lies in
 * this library (ranges.c, hg_from_runtime) pass straight through, before
 * and after start-up.
 *
 * Every wrapper first hands the thread's buffered accesses to the Go side
 * (hg_flush), so that they are processed with the segment and lockset they
 * were made under; then it tells the Go side what the operation means:
 * lock/unlock change the thread's lockset (the hybrid algorithm takes no
 * happens-before from locks), the others are releases and acquires on the
 * object's address (ch. 5.1.2).
 */
#define _GNU_SOURCE
#include "rt_internal.h"
#include "wrap.h"

#include <dlfcn.h>
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdarg.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <errno.h>

#include "_cgo_export.h"

/* ---- threads ---- */

struct hg_start {
	void *(*fn)(void *);
	void *arg;
	int32_t tid;
};

DEFINE_REAL(int, pthread_create, pthread_t *, const pthread_attr_t *, void *(*)(void *), void *)
DEFINE_REAL(int, pthread_join, pthread_t, void **)
DEFINE_REAL(int, pthread_tryjoin_np, pthread_t, void **)
DEFINE_REAL(int, pthread_timedjoin_np, pthread_t, void **, const struct timespec *)
DEFINE_REAL(int, pthread_clockjoin_np, pthread_t, void **, clockid_t, const struct timespec *)
DEFINE_REAL(void, pthread_exit, void *)
DEFINE_REAL(int, pthread_detach, pthread_t)
DEFINE_REAL(int, pthread_mutex_lock, pthread_mutex_t *)

/* publications under way, by mutex (hg_publish_begin below) */
#define HG_PUB_SLOTS 256 /* 1 << 8: hg_pub_slot */
#define HG_PUB_SPIN 1024 /* pauses before a waiter sleeps (hg_publish_wait) */
enum { HG_PUB_WRITES, HG_PUB_READS }; /* what a publication hands over */
#define HG_PUB_IN_C 4 /* ... flag: the C side publishes it (regionpub.c), unless it cannot */
static struct hg_pub_slot {
	/* publications under way, by what they hand over (futex words): a
	 * region that wrote or signalled, and one that only read */
	int32_t pending[2];
	int32_t sleepers; /* threads asleep on a pending word, or about to be */
	char pad[52];
} hg_pub[HG_PUB_SLOTS] __attribute__((aligned(64)));

/* ---- the process ends with its last program thread ----
 * glibc ends the process (exit(0)) when its last thread exits, counting
 * every thread, the Go runtime's included: those never exit, so a
 * program whose main thread calls pthread_exit while detached workers
 * finish would live on forever. The runtime counts the program's own
 * threads (main and every thread it creates) and calls exit(0) when the
 * last one is gone, as glibc would have: from a thread-specific-data
 * destructor, which runs however a thread ends (return, pthread_exit,
 * cancellation). Off in forked children, which have no Go threads. */
static int hg_threads_alive = 1;
static int hg_count_threads;
static pthread_key_t hg_alive_key;

static void hg_unpark(void);

static void hg_thread_gone(void *unused)
{
	(void)unused;
	hg_unpark(); /* cancelled in a condition wait */
	if (__atomic_sub_fetch(&hg_threads_alive, 1, __ATOMIC_ACQ_REL) == 0 && hg_count_threads)
		exit(0);
}

void hg_threads_init(void)
{
	if (pthread_key_create(&hg_alive_key, hg_thread_gone) == 0 && pthread_setspecific(hg_alive_key, (void *)1) == 0)
		hg_count_threads = 1;
}

void hg_threads_forked(void)
{
	hg_count_threads = 0;
	/* publications other threads had under way never end in the child
	 * (one of the forking thread's own, from a signal handler, ends
	 * below zero: nobody waits for it) */
	memset(hg_pub, 0, sizeof hg_pub);
}

static void hg_thread_born(void)
{
	if (hg_count_threads)
		pthread_setspecific(hg_alive_key, (void *)1);
}

/* hg_create_counted is pthread_create for a start routine that calls
 * hg_thread_born first. */
static int hg_create_counted(pthread_t *th, const pthread_attr_t *attr, void *(*start)(void *), void *s)
{
	int counting = hg_count_threads;
	if (counting)
		__atomic_add_fetch(&hg_threads_alive, 1, __ATOMIC_ACQ_REL);
	int r = REAL(pthread_create)(th, attr, start, s);
	if (r != 0 && counting)
		__atomic_sub_fetch(&hg_threads_alive, 1, __ATOMIC_ACQ_REL);
	return r;
}

/* hg_plain_start starts a thread the detector does not track. */
static void *hg_plain_start(void *p)
{
	struct hg_start s = *(struct hg_start *)p;
	__libc_free(p);
	hg_thread_born();
	return s.fn(s.arg);
}

static void hg_thread_done(struct hg_thread *t)
{
	hg_flush(t);
	GO(t, hg_d_thread_exit(t->tid));
	hg_retire(t); /* what it does from here on (TLS destructors) is not checked */
}

/* hg_stack_reset: a new thread's stack block (its stack, and above it
 * its static TLS and thread descriptor) starts with no shadow state, as
 * ThreadSanitizer resets both at a thread's start. glibc's stack cache
 * gives an exited thread's block to a thread created later, ordered
 * after the exit only inside glibc: what the first made through pointers
 * into it (a local array a helper fills, a __thread array) was paired
 * with the second's accesses (an outsider's 300 short-lived detached
 * threads: a false report in 8 of 11 runs). */
static void hg_stack_reset(void)
{
	pthread_attr_t a;
	void *lo;
	size_t n;
	if (!hg_detect || pthread_getattr_np(pthread_self(), &a) != 0)
		return;
	if (pthread_attr_getstack(&a, &lo, &n) == 0)
		hg_reset_heap_cells((uint64_t)(uintptr_t)lo, n);
	pthread_attr_destroy(&a);
}

static void *hg_thread_start(void *p)
{
	struct hg_start s = *(struct hg_start *)p;
	__libc_free(p);
	hg_thread_born();
	hg_stack_reset();
	struct hg_thread *t = hg_current();
	hg_set_tid(t, s.tid);
	hg_trace_own(s.tid);
	hg_record_recyclable(t);
	void *ret = s.fn(s.arg);
	if (hg_detect && t->tid >= 0)
		hg_thread_done(t);
	return ret;
}

int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	resolve_pthread_create();
	if (hg_from_runtime(RA))
		return REAL(pthread_create)(th, attr, fn, arg); /* the Go runtime's own */
	struct hg_thread *t = hg_active(RA);
	/* the runtime's own block, not one of the program's: its creator's
	 * malloc went into the heap records, and the free in the new thread,
	 * which the detector did not know yet, did not; the thread's first
	 * block of that size took its place and was reported as a block of
	 * unknown site the creator allocated */
	struct hg_start *s = __libc_malloc(sizeof *s);
	if (!s)
		return REAL(pthread_create)(th, attr, fn, arg);
	s->fn = fn;
	s->arg = arg;
	if (!t && !hg_detect && hg_forked_threads())
		t = hg_active(RA); /* a forked child's first thread: detection is on now */
	if (!t) {
		int r = hg_create_counted(th, attr, hg_plain_start, s);
		if (r != 0)
			__libc_free(s);
		return r;
	}
	/* the creator's call stack, for reports: this is a wrapper called by
	 * the program, so its callers unwind */
	uint64_t stack[HG_STACK_FRAMES];
	int32_t tid;
	GO(t, tid = hg_d_thread_create(t->tid, stack, hg_backtrace(stack)));
	s->tid = tid;
	int r = hg_create_counted(th, attr, hg_thread_start, s);
	if (r != 0) {
		__libc_free(s);
		return r;
	}
	/* s belongs to the child now (it may be freed already): use tid. A
	 * thread created detached is known by its id to ThreadDetach: once it
	 * exits, its pthread_t may name another thread. Its handle is
	 * recorded after that, for naming only (runtime/detect,
	 * ThreadHandle). */
	int state = PTHREAD_CREATE_JOINABLE;
	if (attr && pthread_attr_getdetachstate(attr, &state) == 0 && state == PTHREAD_CREATE_DETACHED)
		GO(t, hg_d_thread_detach(tid, 0));
	if (tid >= 0)
		GO(t, hg_d_thread_handle(tid, (GoUint64)*th));
	return r;
}

/* pthread_detach: nobody will join the thread; its id is reused once it
 * has exited (runtime/detect, ThreadDetach). The detector hears first:
 * after the real call an exited thread's pthread_t may be another's. */
int pthread_detach(pthread_t th)
{
	resolve_pthread_detach();
	struct hg_thread *t = hg_active(RA);
	if (t)
		GO(t, hg_d_thread_detach(-1, (GoUint64)th));
	return REAL(pthread_detach)(th);
}

/* ---- asynchronous cancellation ----
 * The thread's cancellability type, as the program set it, for
 * hg_go_enter (rt_internal.h); the runtime's own changes of it go to the
 * real function directly. */
DEFINE_REAL(int, pthread_setcanceltype, int, int *)
__thread int hg_cancel_async __attribute__((tls_model("initial-exec")));

int pthread_setcanceltype(int type, int *old)
{
	resolve_pthread_setcanceltype();
	int r = REAL(pthread_setcanceltype)(type, old);
	if (r == 0 && !hg_from_runtime(RA))
		hg_cancel_async = type == PTHREAD_CANCEL_ASYNCHRONOUS;
	return r;
}

int hg_cancel_defer(void)
{
	int old;
	return REAL(pthread_setcanceltype)(PTHREAD_CANCEL_DEFERRED, &old) == 0 && old == PTHREAD_CANCEL_ASYNCHRONOUS;
}

void hg_cancel_resume(void)
{
	REAL(pthread_setcanceltype)(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
}

/* ---- thread names ----
 * pthread_setname_np and prctl(PR_SET_NAME) tell the detector a thread's
 * name, for reports, once the real call succeeded (glibc refuses names
 * longer than 15 bytes with ERANGE: nothing is recorded then). A name
 * orders nothing: the thread's buffered accesses stay buffered. */
DEFINE_REAL(int, pthread_setname_np, pthread_t, const char *)
DEFINE_REAL(int, prctl, int, ...)

/* hg_thread_named: the thread th was named name by the calling thread;
 * another thread is found by its pthread_t on the Go side. */
static void hg_thread_named(pthread_t th, const char *name, void *ra)
{
	struct hg_thread *t = hg_tracked(ra);
	if (!t)
		return;
	int saved = errno;
	GO(t, hg_d_thread_name(pthread_equal(th, pthread_self()) ? t->tid : -1, (GoUint64)th, name));
	errno = saved;
}

int pthread_setname_np(pthread_t th, const char *name)
{
	resolve_pthread_setname_np();
	int r = REAL(pthread_setname_np)(th, name);
	if (r == 0)
		hg_thread_named(th, name, RA);
	return r;
}

/* prctl takes up to four more arguments, all of integer class: they are
 * read as glibc's own prctl reads them (on x86-64 va_arg takes them from
 * the registers the prologue saved, whether the caller passed them or
 * not) and passed on unchanged. PR_SET_NAME names the calling thread; the
 * kernel keeps the first 15 bytes of the name, and so does the record. */
int prctl(int option, ...)
{
	va_list ap;
	va_start(ap, option);
	unsigned long a2 = va_arg(ap, unsigned long), a3 = va_arg(ap, unsigned long);
	unsigned long a4 = va_arg(ap, unsigned long), a5 = va_arg(ap, unsigned long);
	va_end(ap);
	resolve_prctl();
	int r = REAL(prctl)(option, a2, a3, a4, a5);
	if (r == 0 && option == PR_SET_NAME) {
		const char *p = (const char *)a2; /* the kernel read it: readable */
		char name[16];
		size_t i = 0;
		for (; i < sizeof name - 1 && p[i]; i++)
			name[i] = p[i];
		name[i] = 0;
		hg_thread_named(pthread_self(), name, RA);
	}
	return r;
}

/* hg_joined: a join succeeded (r == 0): the joiner acquires the thread's
 * final clock. The _np variants that time out or find the thread still
 * running (r != 0) order nothing. */
static int hg_joined(struct hg_thread *t, pthread_t th, int r)
{
	if (t && r == 0)
		GO(t, hg_d_thread_join(t->tid, (GoUint64)th));
	return r;
}

int pthread_join(pthread_t th, void **ret)
{
	resolve_pthread_join();
	struct hg_thread *t = hg_active(RA);
	return hg_joined(t, th, REAL(pthread_join)(th, ret));
}

int pthread_tryjoin_np(pthread_t th, void **ret)
{
	resolve_pthread_tryjoin_np();
	struct hg_thread *t = hg_active(RA);
	return hg_joined(t, th, REAL(pthread_tryjoin_np)(th, ret));
}

int pthread_timedjoin_np(pthread_t th, void **ret, const struct timespec *ts)
{
	resolve_pthread_timedjoin_np();
	struct hg_thread *t = hg_active(RA);
	return hg_joined(t, th, REAL(pthread_timedjoin_np)(th, ret, ts));
}

int pthread_clockjoin_np(pthread_t th, void **ret, clockid_t clk, const struct timespec *ts)
{
	resolve_pthread_clockjoin_np();
	struct hg_thread *t = hg_active(RA);
	return hg_joined(t, th, REAL(pthread_clockjoin_np)(th, ret, clk, ts));
}

void pthread_exit(void *ret)
{
	resolve_pthread_exit();
	struct hg_thread *t = hg_active(RA);
	if (t)
		hg_thread_done(t);
	REAL(pthread_exit)(ret);
	__builtin_unreachable();
}

/* ---- locks: lockset only ----
 * Locks give no happens-before in the hybrid algorithm, so lock and unlock
 * need no flush: they travel in the event buffer and change the thread's
 * locksets exactly between the accesses they separate. */

/* Publication after the unlock. A region's publication (its hand-offs,
 * its write/read relations) is a call into the Go side of a microsecond
 * or more; made before the real unlock, it lengthens the critical section
 * and the program's other threads block on the mutex and sleep where they
 * would have found it free. So it is made after the real unlock, and
 * whoever takes a mutex next waits, before its first access, until no
 * publication is pending on the mutex's slot (hg_publish_wait, from
 * hg_lock_event): every use of what the region published comes after a
 * lock of its mutex, and until the unlock wrapper returns nothing else of
 * the thread's can be seen by another thread. Slots are a hash of the
 * mutex: two mutexes that share one only wait longer. */
static struct hg_pub_slot *hg_pub_slot(const volatile void *m)
{
	return &hg_pub[hg_hash((uint64_t)(uintptr_t)m, 8)];
}

/* hg_publish_begin is called before the real unlock of a region that
 * hg_region_end said goes to the Go side (what: HG_PUB_WRITES or
 * HG_PUB_READS), hg_publish_end after it. */
static struct hg_pub_slot *hg_publish_begin(struct hg_thread *t, const volatile void *m, int what)
{
	struct hg_pub_slot *slot = hg_pub_slot(m);
	__atomic_add_fetch(&slot->pending[what], 1, __ATOMIC_RELAXED); /* the real unlock releases it */
	t->publishing = 1;
	return slot;
}

/* A publisher that drops a pending word to zero wakes the slot's
 * sleepers; a waiter counts itself in before it looks at the word for the
 * last time, so that one of the two sees the other (both sequentially
 * consistent). A region the C side published leaves its events in the
 * buffer (flush 0). */
static void hg_publish_end(struct hg_thread *t, struct hg_pub_slot *slot, int what, int flush)
{
	int saved = errno;
	if (flush)
		hg_flush(t);
	t->publishing = 0;
	if (__atomic_sub_fetch(&slot->pending[what], 1, __ATOMIC_SEQ_CST) == 0 &&
	    __atomic_load_n(&slot->sleepers, __ATOMIC_SEQ_CST) > 0)
		syscall(SYS_futex, &slot->pending[what], FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
	errno = saved;
}

/* hg_pub_quiet waits until the pending word is zero: a publication is a
 * call into the Go side of a few microseconds, so the waiter spins for
 * a while, then sleeps until the publisher wakes it. (Yielding in a loop
 * made more system calls than the program: bench/handoff.c called
 * sched_yield 270 thousand times for 200 thousand locks.) A sleep and
 * its wake-up cost more than the spin: 1,024 pauses in place of 256 took
 * bench/pipeline.c from 0.39 to 0.36 s and bench/handoff.c from 0.56 to
 * 0.53 s (medians of 7, interleaved, on 2026-11-27); 32 made handoff.c
 * 0.81 s. Sixty-four threads on one mutex (two CPUs) were 5% slower. */
static int hg_pub_spin = HG_PUB_SPIN;

/* CPUs the process may run on (hg_spin_init), for the spins below */
static int hg_ncpus = 1;

/* hg_spin_init: a process allowed one CPU sleeps at once: the
 * publisher cannot run while the waiter spins (bench/pipeline.c on one
 * CPU spent 7% of its time there); nor does a locker spin on a held
 * mutex (hg_mutex_lock_spun). */
void hg_spin_init(void)
{
	cpu_set_t cpus;
	if (sched_getaffinity(0, sizeof cpus, &cpus) == 0)
		hg_ncpus = CPU_COUNT(&cpus);
	if (hg_ncpus == 1)
		hg_pub_spin = 0;
}

static void hg_pub_quiet(struct hg_pub_slot *slot, int what)
{
	int32_t *pending = &slot->pending[what];
	for (int i = 0; i < hg_pub_spin; i++) {
		if (__atomic_load_n(pending, __ATOMIC_ACQUIRE) <= 0)
			return;
		__builtin_ia32_pause();
	}
	int saved = errno;
	__atomic_add_fetch(&slot->sleepers, 1, __ATOMIC_SEQ_CST);
	for (int32_t v; (v = __atomic_load_n(pending, __ATOMIC_SEQ_CST)) > 0;)
		syscall(SYS_futex, pending, FUTEX_WAIT_PRIVATE, v, NULL, NULL, 0);
	__atomic_sub_fetch(&slot->sleepers, 1, __ATOMIC_RELAXED);
	errno = saved;
}

/* hg_publish_wait waits until no publication the locker needs is pending
 * on m's slot. A reader (read mode) needs only those of regions that
 * wrote: the reads a region publishes are looked up by writers alone
 * (runtime/detect/readlog.go), so readers under one read lock do not wait
 * for each other's. A thread interrupted by a signal between its unlock
 * and the end of its publication does not wait in the handler (it would
 * wait for itself). */
static void hg_publish_wait(struct hg_thread *t, const volatile void *m, int read_mode)
{
	if (t->publishing)
		return;
	struct hg_pub_slot *slot = hg_pub_slot(m);
	hg_pub_quiet(slot, HG_PUB_WRITES);
	if (!read_mode)
		hg_pub_quiet(slot, HG_PUB_READS);
}

/* hg_published: the record's writes from index n on went to the Go side
 * (a nested unlock, a signal, a condition wait): they are not published
 * again. The marks of the nested locks still held move down with the
 * record, so that the writes made under them from now on are theirs. */
static void hg_published(struct hg_thread *t, uint8_t n)
{
	t->nrec_w = n;
	for (int i = 0; i < t->nnest; i++)
		if (t->nest_mark[i] > n)
			t->nest_mark[i] = n;
}

/* Lock events also start and stop the recording of a lock-protected
 * region's accesses for the condition-variable handling (lsd, ch. 6.4):
 * while recording, the fast path notes each access (fastpath.c hg_record). The
 * mutex a condition wait releases and re-acquires is not a region
 * boundary (HG_LOCK_WAIT).
 *
 * A lock taken while others are held may order them before it for the
 * lock-order graph (lockorder.c): a pair not seen before is marked
 * HG_LOCK_ORDER and flushed after the event, so that the Go side adds its
 * edges with the stack taken in this wrapper. A successful trylock cannot
 * deadlock and makes no pair into its mutex. The test reads the lock view
 * before the event moves it. */
static void hg_lock_event(struct hg_thread *t, const volatile void *m, int mode)
{
	if (hg_opts.deadlocks && t->nheld > 0 && !(mode & HG_LOCK_TRY) &&
	    hg_lockorder_new(t, (uint64_t)(uintptr_t)m))
		mode |= HG_LOCK_ORDER;
	hg_publish_wait(t, m, mode & HG_LOCK_READ);
	if (t->want_stack)
		hg_flush(t); /* a report waits for this stack */
	if (!(mode & HG_LOCK_WAIT) && !t->recording && (hg_opts.lsd != 0 || hg_opts.handoff)) {
		/* the outermost lock: a region begins (nested locks are inside it) */
		t->recording = 1;
		t->waited_c = t->hook_joined = t->loop_waited = 0;
		t->region_mutex = (uint64_t)(uintptr_t)m;
		t->region_read = (mode & HG_LOCK_READ) != 0;
		hg_record_reads_reset(t);
		t->nrec_w = 0;
		t->rec_writes_on = 1;
		t->nnest = 0;
		mode |= HG_LOCK_BEGIN;
	} else if (!(mode & HG_LOCK_WAIT) && t->recording && t->nnest < HG_NEST) {
		/* a lock inside the region: its writes from here on are its own */
		if (hg_opts.handoff && t->nrec_w >= HG_REC / 2)
			mode |= HG_LOCK_WRITES_FULL; /* hand the writes over: room for this lock's */
		t->nest_mutex[t->nnest] = (uint64_t)(uintptr_t)m;
		t->nest_mark[t->nnest++] = mode & HG_LOCK_WRITES_FULL ? 0 : t->nrec_w;
		if (hg_opts.handoff && t->nrec_r >= HG_REC)
			mode |= HG_LOCK_READS_FULL; /* hand the reads over: room for this lock's */
	}
	/* the view moves after the event is in the buffer: a full buffer
	 * is flushed before the event goes in, and the flush takes the
	 * view from the Go side, which has not seen this lock yet */
	hg_event(t, (uint64_t)(uintptr_t)m, HG_INFO(0, 0, HG_LOCK), (uint64_t)mode, 1);
	hg_lockview_lock(t, (uint64_t)(uintptr_t)m, mode & HG_LOCK_READ);
	if (mode & (HG_LOCK_READS_FULL | HG_LOCK_WRITES_FULL)) {
		hg_flush(t);
		if (mode & HG_LOCK_READS_FULL)
			hg_record_reads_reset(t);
		if (mode & HG_LOCK_WRITES_FULL)
			hg_published(t, 0);
	} else if (mode & HG_LOCK_ORDER) {
		hg_flush(t); /* the Go side asks for the stack at once (hg_stack_now) */
	}
}

static void hg_unlock_event(struct hg_thread *t, const volatile void *m, int mode)
{
	hg_event(t, (uint64_t)(uintptr_t)m, HG_INFO(0, 0, HG_UNLOCK), (uint64_t)mode, 1);
	hg_lockview_unlock(t, (uint64_t)(uintptr_t)m); /* after the event, as in hg_lock_event */
}

/* hg_nest_index is the place of m among the locks taken inside t's
 * region (the latest if it was taken twice), -1 if it is not there. */
static int hg_nest_index(const struct hg_thread *t, const volatile void *m)
{
	for (int i = t->nnest - 1; i >= 0; i--)
		if (t->nest_mutex[i] == (uint64_t)(uintptr_t)m)
			return i;
	return -1;
}

/* hg_nested_unlock releases a lock taken inside the region, the i-th
 * (hg_nest_index). With lock hand-offs, the writes recorded since it was
 * taken go to the Go side before it is released, published under it and
 * every lock still held: a thread that takes only this mutex next must
 * find them (a producer that holds an outer lock while it hands data
 * over under an inner one). Locks are not always released in the order
 * opposite to their taking: memcached's LRU pass takes an LRU lock, then
 * an item's, and releases the LRU lock first. Until 2026-11-29 only the
 * latest lock was looked for: the LRU lock's writes were then published
 * without it, and its place stayed taken, so that a pass that holds a
 * lock of its own throughout soon had no place left for the slab lock
 * and published nothing written under it. */
static void hg_nested_unlock(struct hg_thread *t, const volatile void *m, int i)
{
	uint8_t mark = t->nest_mark[i];
	for (int k = i + 1; k < t->nnest; k++) {
		t->nest_mutex[k - 1] = t->nest_mutex[k];
		t->nest_mark[k - 1] = t->nest_mark[k];
	}
	t->nnest--;
	if (!hg_opts.handoff || (t->nrec_w <= mark && t->nrec_r == 0)) {
		hg_unlock_event(t, m, 0);
		return;
	}
	hg_unlock_event(t, m, HG_LOCK_NESTED | HG_LOCK_RECORD | (int)mark << HG_LOCK_MARK_SHIFT);
	hg_flush(t);
	/* published under this lock and the outer ones: the region's end must
	 * not publish them again under the outer lock alone */
	hg_published(t, mark);
}

static void hg_signal_settle(struct hg_thread *t);

/* hg_region_close ends t's region of m with its unlock event (mode),
 * which tells of a wait-loop exit the C side settled. */
static void hg_region_close(struct hg_thread *t, const volatile void *m, int mode)
{
	if (t->waited_c)
		mode |= HG_LOCK_WAITED_C | (int)t->hook_joined << HG_LOCK_MARK_SHIFT;
	hg_unlock_event(t, m, mode);
	t->recording = t->waited = t->wrote = t->signalled = 0;
	t->waited_c = t->hook_joined = t->loop_waited = 0;
	t->cv_signal = 0;
	t->region_mutex = 0;
}

/* hg_region_end is every unlock. Releasing the mutex that began the
 * current lock-protected region ends the region. A region with recorded
 * writes (made since its lock or its last signal) that finished a
 * condition wait or holds a mutex used with condition variables goes to
 * the Go side before the mutex is released: the next
 * thread to take the mutex may be a waiter that follows the write/read
 * relations this region's writes create (runtime/detect/cond.go), for instance
 * when the signal is sent after the unlock. With lock hand-offs every
 * region that wrote or read goes there too: its writes are handed to the
 * next reader, its reads to the next writer (runtime/detect/handoff.go).
 * Other unlocks travel in the buffer like the locks. It returns what the
 * region hands over, which its caller does after the real unlock
 * (hg_publish_begin): HG_PUB_READS when it only read, HG_PUB_WRITES when
 * it wrote or signalled, with HG_PUB_IN_C when the C side may publish it
 * (hg_region_end_c), -1 for nothing (a region the C side published
 * before the unlock included).
 *
 * The C side publishes a region under a mutex used with condition
 * variables after the real unlock: the waiter the region's signal woke
 * takes the mutex back at once, and inside the critical section the
 * publication sent it to sleep on the mutex (glibc's mutexes do not
 * spin), where after the unlock it spins a while for the publication
 * (hg_publish_wait): bench/pipeline.c switched 53 thousand times against
 * 15 thousand (one run each, 2026-11-28). Other regions it publishes
 * before the unlock, as until then: the next locker then has no
 * publication to wait for. */
static int hg_region_end(struct hg_thread *t, const volatile void *m)
{
	int nested = t->recording ? hg_nest_index(t, m) : -1;
	if (nested >= 0) {
		hg_nested_unlock(t, m, nested);
		return -1;
	}
	if (!t->recording || t->region_mutex != (uint64_t)(uintptr_t)m) {
		hg_unlock_event(t, m, 0);
		return -1;
	}
	int cvm = hg_cvm_is((uint64_t)(uintptr_t)m), what = -1;
	int mode = HG_LOCK_END | (cvm ? HG_LOCK_CVM : 0);
	if (hg_region_quiet(t, (uint64_t)(uintptr_t)m)) {
		if (cvm || t->cv_signal)
			return (t->wrote || t->cv_signal ? HG_PUB_WRITES : HG_PUB_READS) | HG_PUB_IN_C;
		if (hg_region_publish(t, (uint64_t)(uintptr_t)m, 0)) {
			t->pub_c++;
			hg_region_close(t, m, mode | HG_LOCK_TICKED);
			return -1;
		}
	}
	hg_signal_settle(t); /* before the unlock: the hand-over takes it */
	/* only recorded writes are published (a signal took the earlier
	 * ones); a region that waited also follows the relations of what it
	 * read */
	int waited = t->waited || t->waited_c;
	int flush = (t->nrec_w > 0 && (waited || cvm || hg_opts.handoff)) ||
		    (t->nrec_r > 0 && ((waited && hg_opts.lsd == 2) || hg_opts.handoff)) || t->signalled;
	if (flush) {
		what = t->nrec_w > 0 || t->signalled ? HG_PUB_WRITES : HG_PUB_READS;
		t->pub_go++;
		mode |= HG_LOCK_RECORD;
	}
	hg_region_close(t, m, mode);
	return what;
}

/* hg_region_end_c ends, after the real unlock, a region hg_region_end
 * left to the C side: published in C, the Go side follows the tick; else
 * (something came in between: a signal handler's events) the Go side
 * publishes it whole. It returns whether the buffer must go to the Go
 * side now. */
static int hg_region_end_c(struct hg_thread *t, const volatile void *m)
{
	int cvm = hg_cvm_is((uint64_t)(uintptr_t)m), mode = HG_LOCK_END | (cvm ? HG_LOCK_CVM : 0);
	hg_signal_settle(t);
	int c = hg_region_publish(t, (uint64_t)(uintptr_t)m, cvm);
	if (c) {
		t->pub_c++;
		mode |= HG_LOCK_TICKED;
	} else {
		t->pub_go++;
		mode |= HG_LOCK_RECORD;
	}
	hg_region_close(t, m, mode);
	return !c;
}

/* ---- happens-before: release on the object, acquire on it ---- */

static void hg_release(struct hg_thread *t, void *obj)
{
	if (t)
		GO(t, hg_d_release(t->tid, (GoUint64)(uintptr_t)obj));
}

static void hg_acquire(struct hg_thread *t, void *obj)
{
	if (t)
		GO(t, hg_d_acquire(t->tid, (GoUint64)(uintptr_t)obj));
}

/* Mutexes that code outside the rewritten program locks (a library's
 * own: liblzma hands each block to its worker thread under one). The
 * hand-offs and the lost-signal relations follow the accesses a region
 * makes, and a library's accesses are not instrumented: its regions look
 * empty, and what it passes between threads under its mutex (a buffer
 * filled before the lock, copied by the worker after its own lock, with
 * memcpy, which is checked) looks unordered. Such a mutex orders threads
 * as ThreadSanitizer's mutexes do: its unlock releases the thread's past
 * on it, its lock acquires, and so does a condition wait inside a region
 * it began (from wherever the wait is called). The buffered events go to
 * the Go side first, so that each access stays on its side of the edge. */
static int hg_opaque_caller(void *ra)
{
	return hg_link_pc(ra) == 0;
}

/* hg_opaque_index is m's index in the thread's list of mutexes that
 * unrewritten code locked, or -1. */
static int hg_opaque_index(struct hg_thread *t, const volatile void *m)
{
	for (int i = t->nopaque - 1; i >= 0; i--)
		if (t->opaque_m[i] == (uint64_t)(uintptr_t)m)
			return i;
	return -1;
}

static void hg_opaque_acquire(struct hg_thread *t, const volatile void *m)
{
	hg_flush(t);
	hg_acquire(t, (void *)(uintptr_t)m);
}

static void hg_opaque_release(struct hg_thread *t, const volatile void *m)
{
	hg_flush(t);
	hg_release(t, (void *)(uintptr_t)m);
}

/* hg_opaque_lock follows a lock of m that the code at ra made. */
static void hg_opaque_lock(struct hg_thread *t, const volatile void *m, void *ra)
{
	if (!hg_opaque_caller(ra))
		return;
	hg_opaque_acquire(t, m);
	if (t->nopaque < HG_OPAQUE)
		t->opaque_m[t->nopaque++] = (uint64_t)(uintptr_t)m;
}

/* hg_opaque_unlock precedes an unlock of m that the code at ra makes. */
static void hg_opaque_unlock(struct hg_thread *t, const volatile void *m, void *ra)
{
	int i = hg_opaque_index(t, m);
	if (i >= 0)
		t->opaque_m[i] = t->opaque_m[--t->nopaque];
	if (i >= 0 || hg_opaque_caller(ra))
		hg_opaque_release(t, m);
}

/* Spinning on a held default mutex. The critical sections of a
 * rewritten program are longer than the program's own (instrumented
 * accesses, the wait for the previous holder's publication), and glibc's
 * default mutex puts a locker that finds it held to sleep at once: the
 * program's threads slept and were woken far more often than natively
 * (bench/pipeline.c, two threads: 15 thousand context switches a run,
 * against 6 thousand natively and 13 thousand under ThreadSanitizer; 7
 * thousand with the spin). A locker of a
 * default mutex that is held now spins a while for it first, as glibc's
 * adaptive mutexes do, but only while no more of the program's threads
 * can run than there are CPUs (hg_threads_alive less those asleep in a
 * condition wait or on a mutex, hg_parked): otherwise the holder may
 * well be the thread off the CPU the spinner takes, and sixty-four
 * threads on one mutex took 1.04 -> 1.18 to 1.48 s when every locker
 * spun (2026-11-28). The mutex is read before the real lock as glibc's
 * public layout has it (bits/struct_mutex.h); it changes nothing in it. */
#define HG_LOCK_SPIN 1024 /* pauses */
static struct {
	int32_t n; /* program threads asleep, or about to be, on a mutex or a condition variable */
	char pad[60];
} hg_parked __attribute__((aligned(64)));
static __thread int hg_parked_self __attribute__((tls_model("initial-exec"))); /* this thread counts in hg_parked */

static void hg_park(void)
{
	if (!hg_parked_self) {
		hg_parked_self = 1;
		__atomic_add_fetch(&hg_parked.n, 1, __ATOMIC_RELAXED);
	}
}

/* hg_unpark undoes hg_park; a thread that ends parked (cancelled in a
 * condition wait) is unparked by hg_thread_gone. */
static void hg_unpark(void)
{
	if (hg_parked_self) {
		hg_parked_self = 0;
		__atomic_sub_fetch(&hg_parked.n, 1, __ATOMIC_RELAXED);
	}
}

static int hg_may_spin(void)
{
	if (hg_ncpus < 2 || !hg_count_threads)
		return 0;
	int running = __atomic_load_n(&hg_threads_alive, __ATOMIC_RELAXED) - __atomic_load_n(&hg_parked.n, __ATOMIC_RELAXED);
	return running <= hg_ncpus;
}

static int hg_mutex_held(pthread_mutex_t *m)
{
	return __atomic_load_n(&m->__data.__lock, __ATOMIC_RELAXED) != 0;
}

/* hg_mutex_lock_spun is the real pthread_mutex_lock of m, after a spin
 * while m is a default mutex, held, and hg_may_spin. */
static int hg_mutex_lock_spun(pthread_mutex_t *m)
{
	if (__atomic_load_n(&m->__data.__kind, __ATOMIC_RELAXED) != PTHREAD_MUTEX_TIMED_NP || !hg_mutex_held(m))
		return REAL(pthread_mutex_lock)(m);
	if (hg_may_spin())
		for (int i = 0; i < HG_LOCK_SPIN && hg_mutex_held(m); i++)
			__builtin_ia32_pause();
	if (!hg_mutex_held(m))
		return REAL(pthread_mutex_lock)(m);
	hg_park();
	int r = REAL(pthread_mutex_lock)(m);
	hg_unpark();
	return r;
}

#define LOCK_WRAPPER(name, type, mode)                  \
	DEFINE_REAL(int, name, type *)                  \
	int name(type *m)                               \
	{                                               \
		resolve_##name();                       \
		struct hg_thread *t = hg_tracked(RA); \
		int r = REAL(name)(m);                  \
		if (t && r == 0) {                      \
			hg_lock_event(t, m, mode);      \
			hg_opaque_lock(t, m, RA);       \
		}                                       \
		return r;                               \
	}

/* hg_mutex_release releases a default mutex as glibc's unlock does
 * (nptl's lll_unlock: the owner and user count, then the lock word to
 * zero), but leaves the wake-up of a thread asleep on it to the caller
 * (hg_mutex_wake), after the region's publication. Woken at the unlock,
 * that thread took the mutex and then waited for the publication while
 * holding it; on a machine with more threads than CPUs the waker was
 * often preempted by the thread it woke before publishing, and the
 * wakee spun, slept, and was woken again (bench/handoff.c: 58 thousand
 * context switches against ThreadSanitizer's 6 thousand). It returns
 * -1 for any other kind of mutex (recursive, error-checking, robust,
 * priority-inheriting, process-shared, elided), which the real unlock
 * releases; else 1 when a thread may sleep on the lock word, 0 when none
 * does. The layout is glibc's public one (bits/struct_mutex.h). */
static int hg_mutex_release(pthread_mutex_t *m)
{
	if (__atomic_load_n(&m->__data.__kind, __ATOMIC_RELAXED) != PTHREAD_MUTEX_TIMED_NP)
		return -1;
	m->__data.__owner = 0;
	m->__data.__nusers--;
	return __atomic_exchange_n(&m->__data.__lock, 0, __ATOMIC_RELEASE) > 1;
}

/* hg_mutex_wake wakes a thread asleep on a default mutex that
 * hg_mutex_release released. It touches the mutex only through the
 * system call, as glibc's unlock does: the mutex may be destroyed and its
 * memory freed or unmapped by now (another thread locked, unlocked and
 * freed it during the publication). So it cannot tell whether another
 * thread took the mutex meanwhile, and a sleeper it wakes may find the
 * mutex taken and sleep again. Handing the wake-up to that thread's
 * unlock (the lock word compared and marked contended) would avoid
 * that, but would write into memory the program may have reused. */
static void hg_mutex_wake(pthread_mutex_t *m)
{
	int saved = errno;
	syscall(SYS_futex, &m->__data.__lock, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	errno = saved;
}

/* the other lock kinds have no split release: the real unlock */
static int hg_no_release(const volatile void *m)
{
	(void)m;
	return -1;
}

static void hg_no_wake(const volatile void *m)
{
	(void)m;
}

/* UNLOCK_WRAPPER: a region the C side publishes after the real unlock
 * goes between the release (release: -1 when it did not release, which
 * the real unlock then does) and the wake-up of a sleeper (wake). One
 * the Go side publishes (a flush, microseconds) is released by the real
 * unlock, which wakes first: a sleeper woken that much later found the
 * mutex taken by a thread that came meanwhile, and slept again (64
 * threads on one mutex: 0.47 -> 0.57 s; 0.40 s now). */
#define UNLOCK_WRAPPER(name, type, release, wake)                                \
	DEFINE_REAL(int, name, type *)                                           \
	int name(type *m)                                                        \
	{                                                                        \
		resolve_##name();                                                \
		struct hg_thread *t = hg_tracked(RA);                            \
		if (t)                                                           \
			hg_opaque_unlock(t, m, RA);                              \
		int what = t ? hg_region_end(t, m) : -1;                         \
		if (what < 0)                                                    \
			return REAL(name)(m);                                    \
		int kind = what & ~HG_PUB_IN_C, in_c = what & HG_PUB_IN_C;       \
		struct hg_pub_slot *slot = hg_publish_begin(t, m, kind);         \
		int sleeper = in_c ? release(m) : -1;                            \
		int r = sleeper < 0 ? REAL(name)(m) : 0;                         \
		int flush = !in_c || hg_region_end_c(t, m);                      \
		hg_publish_end(t, slot, kind, flush);                            \
		if (sleeper > 0)                                                 \
			wake(m);                                                 \
		return r;                                                        \
	}

/* A destroyed mutex leaves the lock-order graph: a new one at its address
 * starts with no edges (runtime/detect/lockorder.go). The event is
 * flushed at once, so that the Go side has made the pair filter forget
 * the mutex's pairs before this thread can lock a new one there. Nothing
 * goes to the Go side while no pair of locks was ever seen. */
static void hg_lock_destroyed(struct hg_thread *t, const volatile void *m)
{
	if (!t || !hg_opts.deadlocks || !hg_lockorder_any())
		return;
	hg_event(t, (uint64_t)(uintptr_t)m, HG_INFO(0, 0, HG_UNLOCK), HG_LOCK_DESTROY, 1);
	hg_flush(t);
}

#define DESTROY_WRAPPER(name, type)                          \
	DEFINE_REAL(int, name, type *)                       \
	int name(type *m)                                    \
	{                                                    \
		resolve_##name();                            \
		hg_lock_destroyed(hg_tracked(RA), m);        \
		return REAL(name)(m);                        \
	}

/* pthread_mutex_lock is LOCK_WRAPPER's, with the real lock spun */
int pthread_mutex_lock(pthread_mutex_t *m)
{
	resolve_pthread_mutex_lock();
	struct hg_thread *t = hg_tracked(RA);
	int r = t ? hg_mutex_lock_spun(m) : REAL(pthread_mutex_lock)(m);
	if (t && r == 0) {
		hg_lock_event(t, m, 0);
		hg_opaque_lock(t, m, RA);
	}
	return r;
}
LOCK_WRAPPER(pthread_mutex_trylock, pthread_mutex_t, HG_LOCK_TRY)
UNLOCK_WRAPPER(pthread_mutex_unlock, pthread_mutex_t, hg_mutex_release, hg_mutex_wake)
DESTROY_WRAPPER(pthread_mutex_destroy, pthread_mutex_t)
LOCK_WRAPPER(pthread_spin_lock, pthread_spinlock_t, 0)
LOCK_WRAPPER(pthread_spin_trylock, pthread_spinlock_t, HG_LOCK_TRY)
UNLOCK_WRAPPER(pthread_spin_unlock, pthread_spinlock_t, hg_no_release, hg_no_wake)
DESTROY_WRAPPER(pthread_spin_destroy, pthread_spinlock_t)
LOCK_WRAPPER(pthread_rwlock_wrlock, pthread_rwlock_t, 0)
LOCK_WRAPPER(pthread_rwlock_trywrlock, pthread_rwlock_t, HG_LOCK_TRY)
LOCK_WRAPPER(pthread_rwlock_rdlock, pthread_rwlock_t, HG_LOCK_READ)
LOCK_WRAPPER(pthread_rwlock_tryrdlock, pthread_rwlock_t, HG_LOCK_READ | HG_LOCK_TRY)
UNLOCK_WRAPPER(pthread_rwlock_unlock, pthread_rwlock_t, hg_no_release, hg_no_wake)
DESTROY_WRAPPER(pthread_rwlock_destroy, pthread_rwlock_t)

DEFINE_REAL(int, pthread_mutex_timedlock, pthread_mutex_t *, const struct timespec *)
int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *ts)
{
	resolve_pthread_mutex_timedlock();
	struct hg_thread *t = hg_tracked(RA);
	int r = REAL(pthread_mutex_timedlock)(m, ts);
	if (t && r == 0) {
		hg_lock_event(t, m, 0);
		hg_opaque_lock(t, m, RA);
	}
	return r;
}

/* Condition variables. A signal publishes the signaller's past on the
 * condition variable (and, with lsd=wr, on the variables it wrote in its
 * lock-protected region); a completed wait acquires it (runtime/detect/cond.go).
 * A wait that a wait-loop hook marked is only remembered: the loop's exit
 * hook makes the edge, even when the signal came before the loop and the
 * wait never ran (ch. 6.3). Waiting releases and re-acquires the mutex:
 * the lockset follows. */
DEFINE_REAL(int, pthread_cond_signal, pthread_cond_t *)
DEFINE_REAL(int, pthread_cond_broadcast, pthread_cond_t *)
DEFINE_REAL(int, pthread_cond_wait, pthread_cond_t *, pthread_mutex_t *)
DEFINE_REAL(int, pthread_cond_timedwait, pthread_cond_t *, pthread_mutex_t *, const struct timespec *)
DEFINE_REAL(int, pthread_cond_clockwait, pthread_cond_t *, pthread_mutex_t *, clockid_t, const struct timespec *)

/* hg_signal travels as an event with the thread's buffered accesses: one
 * call into Go for both. With hand-offs, a signal sent inside a
 * lock-protected region whose mutex the condition's waiters use stays in
 * the buffer until the region ends: a woken waiter must take the mutex
 * back before it goes on, and then waits for the region's hand-over
 * (hg_publish_wait), which the signal travels with. So does one sent
 * before any thread waited on the condition: a waiter then almost always
 * uses the mutex the signaller holds (one that used another mutex and
 * left its wait loop before the signaller's unlock would miss the
 * signal's edge). Made at the signal, the call into Go kept the mutex
 * held for its length, and the woken waiter blocked on it (the
 * pipeline's threads switched 8 times as often). The signal then takes
 * all the region's writes, as the region's end does, not only those
 * before it. A condition wait in the region hands it over first. */
static void hg_signal(struct hg_thread *t, pthread_cond_t *c)
{
	if (!t)
		return;
	if (hg_opts.handoff && t->recording && hg_cvm_waited_with((uint64_t)(uintptr_t)c, t->region_mutex)) {
		if (t->cv_signal != (uint64_t)(uintptr_t)c)
			hg_signal_settle(t); /* another one's, first */
		t->cv_signal = (uint64_t)(uintptr_t)c;
		return;
	}
	hg_event(t, (uint64_t)(uintptr_t)c, HG_INFO(0, 0, HG_SIGNAL), 0, 1);
	hg_flush(t);
	hg_published(t, 0); /* the signal took the region's writes; later ones are not its */
	t->rec_writes_on = hg_opts.handoff; /* hand-offs publish later writes at the unlock */
}

/* hg_signal_settle releases the region's signal that waits (cv_signal):
 * in C when the condition variable's slot of the release stamps allows
 * (hg_cv_release_c), else in the buffer for the Go side, which the
 * region's hand-over takes (signalled). Made after the mutex's release
 * (hg_region_end_c), the release costs the critical section nothing: a
 * queue's four threads on one mutex (bench/handoff.c) took 5% longer
 * with the release made at the signal (medians of 5, interleaved). It
 * orders after the signaller what the region did after the signal too,
 * which the mutex orders before the woken waiter anyway. */
static void hg_signal_settle(struct hg_thread *t)
{
	uint64_t c = t->cv_signal;
	if (!c)
		return;
	t->cv_signal = 0;
	if (hg_cv_release_c(t, c))
		return;
	hg_event(t, c, HG_INFO(0, 0, HG_SIGNAL), HG_SIGNAL_AT_END, 1);
	t->signalled = 1;
}

int pthread_cond_signal(pthread_cond_t *c)
{
	resolve_pthread_cond_signal();
	hg_signal(hg_tracked(RA), c);
	return REAL(pthread_cond_signal)(c);
}

int pthread_cond_broadcast(pthread_cond_t *c)
{
	resolve_pthread_cond_broadcast();
	hg_signal(hg_tracked(RA), c);
	return REAL(pthread_cond_broadcast)(c);
}

/* hg_wait_mark is the index in the record from which the writes of the
 * region were made under m (0 for the region's own mutex, the mark of a
 * nested lock), or -1 when m is neither. */
static int hg_wait_mark(struct hg_thread *t, pthread_mutex_t *m)
{
	uint64_t mu = (uint64_t)(uintptr_t)m;
	if (!t->recording)
		return -1;
	if (t->region_mutex == mu)
		return 0;
	int i = hg_nest_index(t, m);
	return i < 0 ? -1 : t->nest_mark[i];
}

/* hg_wait_begin is called before a condition wait; it returns whether the
 * wait belongs to a wait loop. The wait releases the mutex inside the
 * region: with lock hand-offs, the writes recorded under it (since the
 * region began, its last signal or its last wait) go to the Go side before
 * the mutex is released, as at the region's end. The next holder may take
 * over what the region put in the protected state while this thread
 * sleeps (a worker that queues its result and waits for more work). A
 * mutex that a library locked also releases here, and hg_wait_end
 * acquires it (hg_opaque_lock). */
static int hg_wait_begin(struct hg_thread *t, pthread_cond_t *c, pthread_mutex_t *m)
{
	if (!t)
		return 0;
	int in_loop = t->wait_mark;
	t->wait_mark = 0;
	hg_cvm_wait((uint64_t)(uintptr_t)c, (uint64_t)(uintptr_t)m);
	int mark = hg_opts.handoff ? hg_wait_mark(t, m) : -1;
	hg_signal_settle(t); /* the wait releases the mutex */
	if (mark < 0 || t->nrec_w <= mark) {
		hg_unlock_event(t, m, HG_LOCK_WAIT);
		if (t->signalled) /* a signal waits in the buffer (hg_signal) */
			hg_flush(t);
	} else {
		hg_unlock_event(t, m, HG_LOCK_WAIT | HG_LOCK_RECORD | mark << HG_LOCK_MARK_SHIFT);
		hg_flush(t);
		hg_published(t, (uint8_t)mark);
	}
	t->signalled = 0;
	if (hg_opaque_index(t, m) >= 0)
		hg_opaque_release(t, m); /* a region a library's lock began */
	return in_loop;
}

static void hg_wait_end(struct hg_thread *t, pthread_cond_t *c, pthread_mutex_t *m, int in_loop, int r)
{
	if (!t)
		return;
	hg_lock_event(t, m, HG_LOCK_WAIT);
	t->waited = t->recording;
	t->loop_waited |= in_loop;
	hg_event(t, (uint64_t)(uintptr_t)c, HG_INFO(0, 0, HG_WAITDONE),
		 (uint64_t)(in_loop ? HG_WAIT_IN_LOOP : 0) | (r == 0 ? HG_WAIT_WOKE : 0), 1);
	hg_flush(t);
	if (hg_opaque_index(t, m) >= 0)
		hg_opaque_acquire(t, m);
}

/* A thread cancelled in a condition wait (a cancellation point) holds
 * the mutex again when its cleanup handlers run: glibc takes it back
 * before unwinding. hg_wait_cancelled tells the detector so, as
 * hg_wait_end would have; without it the cleanup handler that unlocks
 * the mutex (what POSIX asks of a cancellable waiter) ran, for the
 * detector, with no lock held, and its accesses to what the mutex
 * protects were reported against the other threads'. */
struct hg_waiting {
	struct hg_thread *t;
	pthread_cond_t *c;
	pthread_mutex_t *m;
	int in_loop;
};

static void hg_wait_cancelled(void *p)
{
	const struct hg_waiting *w = p;
	hg_unpark();
	hg_wait_end(w->t, w->c, w->m, w->in_loop, ECANCELED);
}

/* HG_COND_WAIT is the body of a condition wait's wrapper, whose real
 * function is called as REAL(name)(c, m, rest...). */
#define HG_COND_WAIT(name, ...)                                      \
	resolve_##name();                                            \
	struct hg_thread *t = hg_active(RA);                         \
	struct hg_waiting w = {t, c, m, hg_wait_begin(t, c, m)};     \
	int r;                                                       \
	pthread_cleanup_push(hg_wait_cancelled, &w);                 \
	if (t)                                                       \
		hg_park();                                           \
	r = REAL(name)(c, m, ##__VA_ARGS__);                         \
	hg_unpark();                                                 \
	pthread_cleanup_pop(0);                                      \
	hg_wait_end(t, c, m, w.in_loop, r);                          \
	return r

int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	HG_COND_WAIT(pthread_cond_wait);
}

int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *ts)
{
	HG_COND_WAIT(pthread_cond_timedwait, ts);
}

int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock, const struct timespec *ts)
{
	HG_COND_WAIT(pthread_cond_clockwait, clock, ts);
}

/* Semaphores. */
DEFINE_REAL(int, sem_post, sem_t *)
DEFINE_REAL(int, sem_wait, sem_t *)
DEFINE_REAL(int, sem_trywait, sem_t *)
DEFINE_REAL(int, sem_timedwait, sem_t *, const struct timespec *)

int sem_post(sem_t *s)
{
	resolve_sem_post();
	hg_release(hg_active(RA), s);
	return REAL(sem_post)(s);
}

#define SEM_WAIT(name, ...)                                      \
	{                                                        \
		resolve_##name();                                \
		struct hg_thread *t = hg_active(RA);             \
		int r = REAL(name)(__VA_ARGS__);                 \
		if (r == 0)                                      \
			hg_acquire(t, s);                        \
		return r;                                        \
	}
int sem_wait(sem_t *s) SEM_WAIT(sem_wait, s)
int sem_trywait(sem_t *s) SEM_WAIT(sem_trywait, s)
int sem_timedwait(sem_t *s, const struct timespec *ts) SEM_WAIT(sem_timedwait, s, ts)

/* Barriers: everyone releases into the round's clock before anyone can
 * leave, then acquires that round's clock (runtime/detect/sync.go). */
DEFINE_REAL(int, pthread_barrier_init, pthread_barrier_t *, const pthread_barrierattr_t *, unsigned)
DEFINE_REAL(int, pthread_barrier_wait, pthread_barrier_t *)
int pthread_barrier_init(pthread_barrier_t *b, const pthread_barrierattr_t *a, unsigned n)
{
	resolve_pthread_barrier_init();
	struct hg_thread *t = hg_active(RA);
	int r = REAL(pthread_barrier_init)(b, a, n);
	if (t && r == 0)
		GO(t, hg_d_barrier_init((GoUint64)(uintptr_t)b, n));
	return r;
}

int pthread_barrier_wait(pthread_barrier_t *b)
{
	resolve_pthread_barrier_wait();
	struct hg_thread *t = hg_active(RA);
	GoUint64 gen = 0;
	if (t)
		GO(t, gen = hg_d_barrier_arrive(t->tid, (GoUint64)(uintptr_t)b));
	int r = REAL(pthread_barrier_wait)(b);
	if (t)
		GO(t, hg_d_barrier_leave(t->tid, (GoUint64)(uintptr_t)b, gen));
	return r;
}

/* C++ static-initialisation guards: the constructing thread releases on
 * the guard; a thread that finds the object built acquires it (also when it
 * only tests the guard byte inline: hgrewrite makes those reads atomic). */
DEFINE_REAL(int, __cxa_guard_acquire, uint64_t *)
DEFINE_REAL(void, __cxa_guard_release, uint64_t *)
int __cxa_guard_acquire(uint64_t *g)
{
	resolve___cxa_guard_acquire();
	struct hg_thread *t = hg_active(RA);
	int r = REAL(__cxa_guard_acquire)(g);
	if (r == 0)
		hg_acquire(t, g);
	return r;
}

void __cxa_guard_release(uint64_t *g)
{
	resolve___cxa_guard_release();
	hg_release(hg_active(RA), g);
	REAL(__cxa_guard_release)(g);
}

/* pthread_once: the initialiser's effects happen before every return. */
DEFINE_REAL(int, pthread_once, pthread_once_t *, void (*)(void))
static __thread void (*hg_once_fn)(void);
static __thread pthread_once_t *hg_once_obj;

static void hg_once_run(void)
{
	void (*fn)(void) = hg_once_fn;
	pthread_once_t *o = hg_once_obj;
	fn();
	struct hg_thread *t = hg_current();
	if (hg_detect && !t->in_rt && t->tid >= 0) {
		hg_flush(t);
		hg_release(t, o);
	}
}

int pthread_once(pthread_once_t *o, void (*fn)(void))
{
	resolve_pthread_once();
	struct hg_thread *t = hg_active(RA);
	if (!t)
		return REAL(pthread_once)(o, fn);
	void (*saved_fn)(void) = hg_once_fn;
	pthread_once_t *saved_obj = hg_once_obj;
	hg_once_fn = fn;
	hg_once_obj = o;
	int r = REAL(pthread_once)(o, hg_once_run);
	hg_once_fn = saved_fn;
	hg_once_obj = saved_obj;
	hg_acquire(t, o);
	return r;
}
