/* threads.c: the per-thread records and the flush to the Go side.
 *
 * It owns the arena of thread records (struct hg_thread, hgrt.h), each
 * thread's registration (hg_register, hg_current, hg_bufferable), the list
 * of all records (hg_threads_head: statistics at exit), and the hand-over
 * of a thread's buffered events to the Go side: hg_flush for the wrappers,
 * hg_flush_saving for the entry points (fastpath.c), hg_event for the
 * wrappers' own events, and the call stacks reports wait for.
 */
#define _GNU_SOURCE
#include "rt_internal.h"

#include <cpuid.h>
#include <execinfo.h>
#include <stdatomic.h>
#include <stddef.h>
#include <sys/mman.h>

#include "_cgo_export.h"

/* hg_self and hg_overflow are read by the entry points too (rt_internal.h). */
__thread struct hg_thread *hg_self __attribute__((tls_model("initial-exec")));
static struct hg_thread *_Atomic hg_list; /* every record, newest first */

/* Thread records come from one reservation, bump-allocated without locks,
 * so registering is async-signal-safe. */
#define HG_ARENA_BYTES (64u << 20)
#define HG_STACK_FRAMES 32
/* Thread records sit on cache lines of their own: every access updates its
 * thread's counter, and a neighbour's record on the same line would
 * bounce between cores. */
#define HG_RECORD_BYTES ((sizeof(struct hg_thread) + 127) & ~(size_t)127)
static char *hg_arena;
static _Atomic size_t hg_arena_used;
struct hg_thread hg_overflow; /* shared, updated atomically, once the arena is full */
static uint32_t hg_xsave_size;

void hg_arena_init(void)
{
	void *a = mmap(NULL, HG_ARENA_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (a != MAP_FAILED)
		hg_arena = a;
	unsigned eax, ebx, ecx, edx;
	if (__get_cpuid_count(0xd, 0, &eax, &ebx, &ecx, &edx) && ebx > 0)
		hg_xsave_size = ebx;
	hg_overflow.tid = -1;
	hg_overflow.in_rt = 1; /* never buffers */
}

/* hg_register creates the calling thread's record. It preserves every
 * register itself, so that calling it does not make the entry points save
 * all registers on every access. */
HG_SLOW struct hg_thread *hg_register(void)
{
	size_t off = atomic_fetch_add_explicit(&hg_arena_used, HG_RECORD_BYTES, memory_order_relaxed);
	if (hg_arena == NULL || off + HG_RECORD_BYTES > HG_ARENA_BYTES)
		return &hg_overflow;
	struct hg_thread *t = (struct hg_thread *)(hg_arena + off);
	t->tid = -1;
	size_t bufsz = HG_EVENTS * sizeof(struct hg_event); /* and hg_retire */
	size_t xs = (hg_xsave_size + 63) & ~(size_t)63;
	void *m = mmap(NULL, bufsz + xs + 64, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		t->in_rt = 1; /* no buffer: count only */
	} else {
		t->buf = m;
		t->xsave = (void *)(((uintptr_t)m + bufsz + 63) & ~(uintptr_t)63);
	}
	t->next = atomic_load_explicit(&hg_list, memory_order_relaxed);
	while (!atomic_compare_exchange_weak_explicit(&hg_list, &t->next, t, memory_order_release,
						      memory_order_relaxed))
		;
	hg_self = t;
	return t;
}

/* hg_retire: the thread has finished (its last events went to the Go
 * side): from now on it only counts, and its event buffer goes back to the
 * system, so that a program creating threads by the thousand does not keep
 * one buffer per thread that ever lived. The record itself stays (the exit
 * statistics read it). */
void hg_retire(struct hg_thread *t)
{
	if (t == &hg_overflow || !t->buf)
		return;
	t->in_rt = 1;
	__asm__ volatile("" ::: "memory");
	size_t bufsz = HG_EVENTS * sizeof(struct hg_event);
	size_t xs = (hg_xsave_size + 63) & ~(size_t)63;
	void *m = t->buf;
	t->buf = NULL;
	t->n = 0;
	munmap(m, bufsz + xs + 64);
}

/* hg_forked_record: a forked child's thread becomes thread tid of the
 * child's own detector (start.c). What the record holds of the parent's
 * detector goes: buffered events, the region recording, signal marks, and
 * whether hg_locks is current. The count of locks held stays: the thread
 * holds them still. */
void hg_forked_record(struct hg_thread *t, int32_t tid)
{
	t->tid = tid;
	t->n = 0;
	t->wait_mark = t->recording = t->waited = t->wrote = 0;
	t->want_stack = 0;
	t->locks_known = 0;
	t->last_atomic = t->region_mutex = 0;
	t->sig_acq = 0;
	t->sig_mark = 0;
	t->nrec_r = t->nrec_w = t->rec_writes_on = t->nnest = 0;
}

struct hg_thread *hg_current(void)
{
	struct hg_thread *t = hg_self;
	return t ? t : hg_register();
}

/* hg_bufferable returns the calling thread's record when a wrapper may
 * buffer an event for it: detection on, a detector thread id, a buffer,
 * and not inside the runtime. */
struct hg_thread *hg_bufferable(void)
{
	if (!hg_detect)
		return NULL;
	struct hg_thread *t = hg_current();
	return t->in_rt || t->tid < 0 || !t->buf ? NULL : t;
}

struct hg_thread *hg_threads_head(void)
{
	return atomic_load_explicit(&hg_list, memory_order_acquire);
}

/* hg_stack_now gives the Go side the call stack for the thread's pending
 * reports. */
static void hg_stack_now(struct hg_thread *t)
{
	void *pcs[HG_STACK_FRAMES];
	int k = backtrace(pcs, HG_STACK_FRAMES);
	uint64_t ras[HG_STACK_FRAMES];
	for (int i = 0; i < k; i++)
		ras[i] = (uint64_t)(uintptr_t)pcs[i];
	t->want_stack = 0;
	hg_d_stack(t->tid, ras, k);
}

/* hg_flush_guarded hands the buffered events to the Go side; the caller
 * has set t->in_rt, so that accesses of a signal handler that interrupts
 * it are dropped. Reports found wait for a call stack: can_stack says the
 * caller is a wrapper called by the program, whose frames have unwind
 * information (trampolines have none); otherwise the stack is taken at the
 * thread's next wrapper call. */
static void hg_flush_guarded(struct hg_thread *t, int can_stack)
{
	struct hg_event acq[8]; /* more signals wait for the next flush */
	uint32_t mark = 0, nacq = hg_sig_acquires(t, acq, 8, &mark);
	if (t->n || nacq) {
		uint32_t n = t->n;
		t->n = 0;
		if (mark > n)
			mark = n;
		/* a signal's acquires go where its handler interrupted the
		 * thread: the events before it, the acquires, the rest */
		int pending = 0;
		if (nacq && mark > 0)
			pending = hg_d_flush(t->tid, t->buf, mark, t);
		if (nacq)
			pending = hg_d_flush(t->tid, acq, nacq, t);
		if (n > (nacq ? mark : 0))
			pending = hg_d_flush(t->tid, t->buf + (nacq ? mark : 0), n - (nacq ? mark : 0), t);
		if (pending > 0)
			t->want_stack = 1;
		t->locks_known = 1; /* its lock events are processed: hg_locks is current */
	}
	if (t->want_stack && can_stack)
		hg_stack_now(t);
}

static void hg_flush_with(struct hg_thread *t, int can_stack)
{
	if (t->in_rt || !hg_detect) {
		t->n = 0;
		return;
	}
	if (t->n == 0 && !t->sig_acq && !(can_stack && t->want_stack))
		return;
	t->in_rt = 1;
	hg_flush_guarded(t, can_stack);
	t->in_rt = 0;
}

/* hg_flush is hg_flush_with for the wrappers: ordinary C functions called
 * by the program; the vector registers are theirs to lose. */
void hg_flush(struct hg_thread *t)
{
	hg_flush_with(t, 1);
}

/* hg_flush_saving is hg_flush for the entry points: the interrupted code
 * may hold live values in any register, vector ones included. */
/* force_align_arg_pointer: trampolines run at any stack alignment, and the
 * C and Go code below assumes the ABI's 16 bytes. */
HG_SLOW __attribute__((force_align_arg_pointer)) void hg_flush_saving(struct hg_thread *t)
{
	if (t->in_rt || !hg_detect) {
		t->n = 0;
		return;
	}
	/* in_rt covers the whole span from xsave to xrstor: a signal handler
	 * flushing in between would overwrite the thread's one save area */
	t->in_rt = 1;
	__asm__ volatile("" ::: "memory");
	void *area = t->xsave;
	if (hg_xsave_size)
		__asm__ volatile("xsave64 (%0)" : : "r"(area), "a"(-1), "d"(-1) : "memory");
	__asm__ volatile("" ::: "memory");
	hg_flush_guarded(t, 0);
	if (hg_xsave_size)
		__asm__ volatile("xrstor64 (%0)" : : "r"(area), "a"(-1), "d"(-1) : "memory");
	__asm__ volatile("" ::: "memory");
	t->in_rt = 0;
}

/* hg_event buffers an event of the C wrappers (heap blocks, locks, memory
 * ranges). When the buffer is full it is flushed only if may_flush: a
 * wrapper called from inside a library (glibc may hold internal locks) must
 * not call into Go, so the event is dropped instead. */
void hg_event(struct hg_thread *t, uint64_t addr, uint64_t info, uint64_t len, int may_flush)
{
	if (t->n == HG_EVENTS) {
		if (!may_flush)
			return;
		hg_flush(t);
	}
	if (t->recording && (HG_INFO_FLAGS(info) & (HG_READ | HG_WRITE)))
		hg_record(t, addr, HG_INFO_FLAGS(info)); /* memcpy and friends */
	struct hg_event *e = &t->buf[t->n];
	e->addr = addr;
	e->info = info;
	e->len = len;
	/* the event is complete before it counts: a signal handler that
	 * flushes in between must not hand over a stale slot */
	__asm__ volatile("" ::: "memory");
	t->n++;
}
