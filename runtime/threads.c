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
#include <unwind.h>
#include <stdatomic.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>

#include "_cgo_export.h"

/* hg_self and hg_overflow are read by the entry points too (rt_internal.h). */
__thread struct hg_thread *hg_self __attribute__((tls_model("initial-exec")));
static struct hg_thread *_Atomic hg_list; /* every record, newest first */

/* Thread records come from one reservation, bump-allocated without locks,
 * so registering is async-signal-safe: room for a record (5 KiB, most of
 * it the lock view's transitions and the threadsets known) per thread id,
 * of which only the pages of records in use are memory. */
#define HG_ARENA_BYTES (512u << 20)
_Static_assert(((sizeof(struct hg_thread) + 127) & ~(size_t)127) * HG_MAX_THREADS <= HG_ARENA_BYTES,
	       "a record per thread id");
/* Thread records sit on cache lines of their own: every access updates its
 * thread's counter, and a neighbour's record on the same line would
 * bounce between cores. */
#define HG_RECORD_BYTES ((sizeof(struct hg_thread) + 127) & ~(size_t)127)
static char *hg_arena;
static _Atomic size_t hg_arena_used;
struct hg_thread hg_overflow; /* shared, updated atomically, once the arena is full */
static uint32_t hg_xsave_size;
/* How the vector state is kept across a call into Go from instrumented
 * code (hg_saving), where the program may hold live values in any
 * register. xsave64 and xrstor64 took about 120 ns a pair here, whatever
 * the components asked for, and were 30% of a program whose locked
 * instructions called into Go (bench/refcount.c); 16 moves each way
 * take 7 ns. So when the rewriter found no VEX, EVEX or XOP instruction
 * in the program (abi.HdrFlagNoVEX), or the processor cannot run one,
 * only xmm0-15 and mxcsr can hold the program's values there; with VEX
 * but no EVEX (abi.HdrFlagNoEVEX), or no AVX-512 on the processor,
 * ymm0-15 and mxcsr; else everything, with XSAVEOPT where there is one
 * (it leaves out components in their initial state). The x87 stack is
 * empty and its control word the program's across any function the Go
 * side calls, as the ABI requires. */
enum { HG_VEC_XSAVE, HG_VEC_XMM, HG_VEC_YMM };
static int hg_vec_mode = HG_VEC_XSAVE;
static int hg_xsaveopt;

void hg_vector_state(uint32_t header_flags)
{
	unsigned eax, ebx, ecx, edx, xcr0 = 0;
	if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_OSXSAVE))
		__asm__("xgetbv" : "=a"(xcr0) : "c"(0) : "edx");
	int avx = (xcr0 & 0x6) == 0x6, avx512 = (xcr0 & 0xe6) == 0xe6;
	if ((header_flags & HG_FLAG_NO_VEX) || !avx)
		hg_vec_mode = HG_VEC_XMM;
	else if ((header_flags & HG_FLAG_NO_EVEX) || !avx512)
		hg_vec_mode = HG_VEC_YMM;
}

#define HG_XMM_SAVE(n) "movdqu %%xmm" #n ", " #n "*16(%0)\n\t"
#define HG_XMM_LOAD(n) "movdqu " #n "*16(%0), %%xmm" #n "\n\t"
#define HG_YMM_SAVE(n) "vmovdqu %%ymm" #n ", " #n "*32(%0)\n\t"
#define HG_YMM_LOAD(n) "vmovdqu " #n "*32(%0), %%ymm" #n "\n\t"
#define HG_VEC16(m) m(0) m(1) m(2) m(3) m(4) m(5) m(6) m(7) m(8) m(9) m(10) m(11) m(12) m(13) m(14) m(15)

/* hg_vec_save and hg_vec_restore keep the program's vector state in area
 * (the record's, 64-byte aligned and large enough for XSAVE) across a
 * call into Go. No C code of theirs may use a vector register before
 * the save (HG_SLOW's general-regs-only). */
static inline void hg_vec_save(void *area)
{
	switch (hg_vec_mode) {
	case HG_VEC_XMM:
		__asm__ volatile(HG_VEC16(HG_XMM_SAVE) "stmxcsr 512(%0)" : : "r"(area) : "memory");
		break;
	case HG_VEC_YMM:
		__asm__ volatile(HG_VEC16(HG_YMM_SAVE) "stmxcsr 512(%0)" : : "r"(area) : "memory");
		break;
	default:
		if (hg_xsaveopt)
			__asm__ volatile("xsaveopt64 (%0)" : : "r"(area), "a"(-1), "d"(-1) : "memory");
		else if (hg_xsave_size)
			__asm__ volatile("xsave64 (%0)" : : "r"(area), "a"(-1), "d"(-1) : "memory");
	}
}

static inline void hg_vec_restore(void *area)
{
	switch (hg_vec_mode) {
	case HG_VEC_XMM:
		__asm__ volatile(HG_VEC16(HG_XMM_LOAD) "ldmxcsr 512(%0)" : : "r"(area) : "memory");
		break;
	case HG_VEC_YMM:
		__asm__ volatile(HG_VEC16(HG_YMM_LOAD) "ldmxcsr 512(%0)" : : "r"(area) : "memory");
		break;
	default:
		if (hg_xsave_size)
			__asm__ volatile("xrstor64 (%0)" : : "r"(area), "a"(-1), "d"(-1) : "memory");
	}
}

void hg_arena_init(void)
{
	void *a = mmap(NULL, HG_ARENA_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (a != MAP_FAILED)
		hg_arena = a;
	unsigned eax, ebx, ecx, edx;
	if (__get_cpuid_count(0xd, 0, &eax, &ebx, &ecx, &edx) && ebx > 0)
		hg_xsave_size = ebx;
	if (hg_xsave_size && __get_cpuid_count(0xd, 1, &eax, &ebx, &ecx, &edx))
		hg_xsaveopt = eax & 1;
	hg_overflow.tid = -1;
	hg_overflow.in_rt = 1; /* never buffers */
}

/* A record's buffer mapping: the event buffer, the signal handlers'
 * events and their positions, and the vector save area (64-byte
 * aligned). */
#define HG_BUF_BYTES (HG_EVENTS * sizeof(struct hg_event))
#define HG_SIG_BYTES (HG_SIG_EVENTS * (sizeof(struct hg_event) + sizeof(uint32_t)))

static size_t hg_buffer_bytes(void)
{
	size_t area = hg_xsave_size > 576 ? hg_xsave_size : 576; /* hg_vec_save's moves need 516 */
	return HG_BUF_BYTES + HG_SIG_BYTES + ((area + 63) & ~(size_t)63) + 64;
}

/* hg_map_buffer maps a record's buffers (given back by hg_retire). */
static int hg_map_buffer(struct hg_thread *t)
{
	char *m = mmap(NULL, hg_buffer_bytes(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return 0;
	t->sig_buf = (struct hg_event *)(m + HG_BUF_BYTES);
	t->sig_pos = (uint32_t *)(m + HG_BUF_BYTES + HG_SIG_EVENTS * sizeof(struct hg_event));
	t->xsave = (void *)(((uintptr_t)m + HG_BUF_BYTES + HG_SIG_BYTES + 63) & ~(uintptr_t)63);
	t->buf = (struct hg_event *)m;
	return 1;
}

/* ---- records of finished threads, for new ones ----
 * A thread the program created (hg_thread_start) gives its record back
 * when it has finished for good: a thread-specific-data destructor, which
 * runs however it ends. From then on the thread counts under hg_overflow,
 * so nothing it still runs (other destructors) touches the record, which
 * goes to the next thread that registers. A program creating threads by
 * the thousand keeps as many records as it has threads alive at once.
 * hg_register only tries the list's lock (a thread's first access may come
 * from a signal handler, even one that interrupted the same thread's
 * registration): when it is busy a new record is made. A finishing thread
 * waits for it. */
static struct hg_thread *hg_free_records; /* linked through next_free */
static int hg_free_lock;
static pthread_key_t hg_record_key;
static int hg_record_key_ok;

static int hg_free_trylock(void) { return !__atomic_exchange_n(&hg_free_lock, 1, __ATOMIC_ACQUIRE); }
static void hg_free_unlock(void) { __atomic_store_n(&hg_free_lock, 0, __ATOMIC_RELEASE); }

static void hg_record_gone(void *p)
{
	struct hg_thread *t = p;
	if (t != hg_self || t == &hg_overflow)
		return;
	t->in_rt = 1;
	hg_self = &hg_overflow;
	hg_trace_detach();
	if (t->accesses + t->ranges > t->mark)
		t->served++;
	t->mark = t->accesses + t->ranges; /* counted */
	while (!hg_free_trylock())
		sched_yield();
	t->next_free = hg_free_records;
	hg_free_records = t;
	hg_free_unlock();
}

/* hg_records_forked: in a forked child the list's lock may be held by a
 * thread that is not there. */
void hg_records_forked(void) { hg_free_lock = 0; }

void hg_records_init(void)
{
	hg_record_key_ok = pthread_key_create(&hg_record_key, hg_record_gone) == 0;
}

void hg_record_recyclable(struct hg_thread *t)
{
	if (hg_record_key_ok && t != &hg_overflow)
		pthread_setspecific(hg_record_key, t);
}

/* hg_reuse_record takes a record from the list and clears what belonged
 * to its last thread; the counters stay (totals at exit), and so does the
 * event buffer if it was not given back. */
static struct hg_thread *hg_reuse_record(void)
{
	if (!__atomic_load_n(&hg_free_records, __ATOMIC_RELAXED) || !hg_free_trylock())
		return NULL;
	struct hg_thread *t = hg_free_records;
	if (t)
		hg_free_records = t->next_free;
	hg_free_unlock();
	if (!t)
		return NULL;
	struct hg_thread keep = *t;
	memset(t, 0, sizeof *t);
	t->accesses = keep.accesses;
	t->ranges = keep.ranges;
	t->bytes = keep.bytes;
	memcpy(t->deferred, keep.deferred, sizeof t->deferred);
	t->sig_dropped = keep.sig_dropped;
	t->lk_mismatch = keep.lk_mismatch;
	t->served = keep.served;
	t->mark = keep.mark;
	t->pub_go = keep.pub_go;
	t->go_calls = keep.go_calls;
	t->pub_c = keep.pub_c;
	t->next = keep.next;
	t->buf = keep.buf;
	t->xsave = keep.xsave;
	t->sig_buf = keep.sig_buf;
	t->sig_pos = keep.sig_pos;
	return t;
}

/* hg_register creates the calling thread's record. It preserves every
 * register itself, so that calling it does not make the entry points save
 * all registers on every access. */
/* hg_set_tid gives t the detector's thread id tid (-1: none yet) and the
 * row of hg_tstate that goes with it. */
uint32_t hg_tid_hw;

void hg_set_tid(struct hg_thread *t, int32_t tid)
{
	uint32_t hw = __atomic_load_n(&hg_tid_hw, __ATOMIC_RELAXED);
	while (tid >= 0 && (uint32_t)tid >= hw &&
	       !__atomic_compare_exchange_n(&hg_tid_hw, &hw, (uint32_t)tid + 1, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		;
	t->tid = tid;
	t->row = tid >= 0 && tid < HG_MAX_THREADS ? &hg_tstate[tid] : NULL;
}

HG_SLOW struct hg_thread *hg_register(void)
{
	struct hg_thread *t = hg_reuse_record();
	if (t) {
		hg_set_tid(t, -1);
		t->joined_at = ~0ull; /* until the Go side has seen the thread (regionpub.c) */
		if (!t->buf && !hg_map_buffer(t))
			t->in_rt = 1; /* no buffer: count only */
		hg_self = t;
		return t;
	}
	size_t off = atomic_fetch_add_explicit(&hg_arena_used, HG_RECORD_BYTES, memory_order_relaxed);
	if (hg_arena == NULL || off + HG_RECORD_BYTES > HG_ARENA_BYTES)
		return &hg_overflow;
	t = (struct hg_thread *)(hg_arena + off);
	hg_set_tid(t, -1);
	t->joined_at = ~0ull;
	if (!hg_map_buffer(t))
		t->in_rt = 1; /* no buffer: count only */
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
	t->sig_buf = NULL; /* before the unmap: a handler now keeps nothing */
	__asm__ volatile("" ::: "memory");
	void *m = t->buf;
	t->buf = NULL;
	t->n = 0;
	t->sig_n = 0;
	munmap(m, hg_buffer_bytes());
}

/* hg_forked_record: a forked child's thread becomes thread tid of the
 * child's own detector (start.c). What the record holds of the parent's
 * detector goes: buffered events, the region recording, signal marks, and
 * whether hg_tstate's locks are current. The count of locks held stays: the thread
 * holds them still. */
void hg_forked_record(struct hg_thread *t, int32_t tid)
{
	hg_set_tid(t, tid);
	hg_trace_own(tid);
	t->n = 0;
	t->go_pending = t->c_ticked = 0;
	t->joined_at = ~0ull;
	t->ncmade = 0;
	t->wait_mark = t->recording = t->waited = t->wrote = 0;
	t->waited_c = t->hook_joined = t->loop_waited = 0;
	t->cv_signal = 0;
	t->want_stack = 0;
	t->locks_known = 0;
	t->last_atomic = t->region_mutex = 0;
	t->sig_acq = 0;
	t->sig_mark = 0;
	t->sig_n = 0;
	hg_record_reads_reset(t);
	t->nrec_w = t->rec_writes_on = t->nnest = 0;
	/* what the parent's detector taught the fast path: lockset and
	 * threadset ids mean other sets in the child's */
	memset(t->lkc, 0, sizeof t->lkc);
	t->nlkc_q = 0;
	memset(t->tsets, 0, sizeof t->tsets);
	memset(t->over_known, 0, sizeof t->over_known);
	memset(t->acq, 0, sizeof t->acq);
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

/* hg_backtrace stores the calling thread's call stack in ras (at most
 * HG_STACK_FRAMES run-time return addresses, innermost first, this
 * library's own frames included) and returns how many. Only a wrapper
 * called by the program may ask: trampolines have no unwind information. */
int hg_backtrace(uint64_t *ras)
{
	void *pcs[HG_STACK_FRAMES];
	int k = backtrace(pcs, HG_STACK_FRAMES);
	for (int i = 0; i < k; i++)
		ras[i] = (uint64_t)(uintptr_t)pcs[i];
	return k;
}

struct hg_unwind {
	uint64_t *frames;
	int n;
};

static _Unwind_Reason_Code hg_unwind_frame(struct _Unwind_Context *ctx, void *arg)
{
	struct hg_unwind *u = arg;
	if (u->n >= HG_STACK_FRAMES)
		return _URC_END_OF_STACK;
	uint64_t ip = _Unwind_GetIP(ctx);
	if (ip == 0)
		return _URC_END_OF_STACK;
	u->frames[2 * u->n] = ip;
	u->frames[2 * u->n + 1] = _Unwind_GetCFA(ctx); /* the frame called from here: this frame's stack pointer */
	u->n++;
	return _URC_NO_REASON;
}

/* hg_stack_now gives the Go side the call stack for the thread's pending
 * reports: (return address, stack pointer) pairs, innermost first. In the
 * backtrace callback the context's CFA is still that of the frame called
 * from the one reported, which is the reported frame's stack pointer at
 * its call. The stack pointers let the Go side find the frame an access
 * was made in, from the stack pointer the access's event carries
 * (runtime/detect/reportstack.go). */
static void hg_stack_now(struct hg_thread *t)
{
	uint64_t frames[2 * HG_STACK_FRAMES];
	struct hg_unwind u = {frames, 0};
	_Unwind_Backtrace(hg_unwind_frame, &u);
	t->want_stack = 0;
	hg_d_stack(t->tid, frames, u.n);
}

/* hg_sig_access keeps an access made inside one of t's signal handlers
 * (t->sig_depth > 0) for the next flush, with the buffer position where
 * the handler interrupted the thread: nothing in a handler may call into
 * Go, and the thread's own buffer may be half written or being flushed.
 * Plain reads and writes only: a handler's atomics and loop hooks would
 * disturb the interrupted code's (last_atomic). A nested handler that
 * arrives between the slot and the count loses one of the two accesses;
 * a full buffer drops (sig_dropped). */
__attribute__((no_caller_saved_registers, target("general-regs-only"))) void hg_sig_access(struct hg_thread *t, uint64_t addr,
											uint64_t info, uint64_t len)
{
	uint32_t flags = HG_INFO_FLAGS(info);
	if (!hg_detect || t->tid < 0 || !t->sig_buf || addr < HG_UNMAPPABLE || !(flags & (HG_READ | HG_WRITE)) ||
	    (flags & (HG_ATOMIC | HG_HOOK | HG_SPIN)))
		return;
	uint32_t i = __atomic_load_n(&t->sig_n, __ATOMIC_RELAXED);
	if (i >= HG_SIG_EVENTS) {
		t->sig_dropped++;
		return;
	}
	t->sig_buf[i].addr = addr;
	t->sig_buf[i].info = info;
	t->sig_buf[i].len = len;
	t->sig_pos[i] = t->n;
	__asm__ volatile("" ::: "memory"); /* complete before it counts */
	__atomic_store_n(&t->sig_n, i + 1, __ATOMIC_RELAXED);
}

/* hg_sig_take moves the handlers' accesses out of t (into ev and pos):
 * handlers may append while it copies, never remove. */
static uint32_t hg_sig_take(struct hg_thread *t, struct hg_event *ev, uint32_t *pos)
{
	uint32_t have = 0;
	for (;;) {
		uint32_t n = __atomic_load_n(&t->sig_n, __ATOMIC_RELAXED);
		for (; have < n; have++) {
			ev[have] = t->sig_buf[have];
			pos[have] = t->sig_pos[have];
		}
		if (__atomic_compare_exchange_n(&t->sig_n, &n, 0, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			return have;
	}
}

/* hg_flush_part hands events [from, to) of the buffer to the Go side. */
static void hg_flush_part(struct hg_thread *t, uint32_t from, uint32_t to, int *pending)
{
	if (to > from) {
		t->go_calls++;
		*pending = hg_d_flush(t->tid, t->buf + from, to - from, t);
	}
}

/* hg_flush_guarded hands the buffered events to the Go side; the caller
 * has set t->in_rt, so that a signal handler that interrupts it keeps its
 * accesses aside (hg_sig_access). Reports found wait for a call stack:
 * can_stack says the caller is a wrapper called by the program, whose
 * frames have unwind information (trampolines have none); otherwise the
 * stack is taken at the thread's next wrapper call.
 *
 * What signal handlers did goes where they interrupted the thread: the
 * acquires of their signals at the first one's mark, each handler access
 * at its position. The handlers' accesses are taken before their
 * signals: a handler whose accesses are taken has had its signal noted
 * already, so no access goes to the Go side before its handler's acquire. */
static void hg_flush_guarded(struct hg_thread *t, int can_stack)
{
	struct hg_event sig[HG_SIG_EVENTS];
	uint32_t pos[HG_SIG_EVENTS];
	uint32_t nsig = t->sig_n ? hg_sig_take(t, sig, pos) : 0;
	struct hg_event acq[8]; /* more signals wait for the next flush */
	uint32_t mark = 0, nacq = hg_sig_acquires(t, acq, 8, &mark);
	if (t->n || nacq || nsig) {
		uint32_t n = t->n, at = 0;
		t->n = 0;
		t->go_pending = t->c_ticked = 0; /* processed before this returns */
		int pending = 0;
		if (nacq) {
			at = mark < n ? mark : n;
			hg_flush_part(t, 0, at, &pending);
			pending = hg_d_flush(t->tid, acq, nacq, t);
		}
		for (uint32_t i = 0; i < nsig;) {
			uint32_t p = pos[i] < at ? at : pos[i] > n ? n : pos[i];
			uint32_t j = i + 1;
			while (j < nsig && pos[j] == pos[i])
				j++;
			hg_flush_part(t, at, p, &pending);
			at = p;
			pending = hg_d_flush(t->tid, sig + i, j - i, t);
			i = j;
		}
		hg_flush_part(t, at, n, &pending);
		if (pending > 0)
			t->want_stack = 1;
		hg_lkc_drain(t);
		hg_lockview_sync(t); /* its lock events are processed: hg_tstate's locks are current */
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
	if (t->n == 0 && !t->sig_acq && !t->sig_n && !(can_stack && t->want_stack))
		return;
	int deferred = hg_go_enter(t);
	hg_flush_guarded(t, can_stack);
	hg_go_leave(t, deferred);
}

/* hg_flush is hg_flush_with for the wrappers: ordinary C functions called
 * by the program; the vector registers are theirs to lose. */
void hg_flush(struct hg_thread *t)
{
	hg_flush_with(t, 1);
}

void hg_flush_signals(struct hg_thread *t)
{
	if (t->sig_n || t->sig_acq)
		hg_flush(t);
}

/* hg_flush_saving is hg_flush for the entry points: the interrupted code
 * may hold live values in any register, vector ones included. */
/* hg_saving flushes t's events, then calls fn(t, regs, info) if fn is not
 * NULL, with the interrupted code's vector registers saved around both:
 * the code a trampoline interrupted may hold live values in any register.
 * in_rt covers the whole span from xsave to xrstor: a signal handler
 * flushing in between would overwrite the thread's one save area. */
static inline void hg_saving(struct hg_thread *t, hg_saving_fn *fn, uint64_t *regs, uint64_t info)
{
	t->in_rt = 1;
	__asm__ volatile("" ::: "memory");
	void *area = t->xsave;
	hg_vec_save(area);
	__asm__ volatile("" ::: "memory");
	/* hg_go_enter's and hg_go_leave's calls into the C library, inside
	 * the vector registers' save */
	int deferred = hg_cancel_async ? hg_cancel_defer() : 0;
	hg_flush_guarded(t, 0);
	if (fn)
		fn(t, regs, info);
	if (deferred)
		hg_cancel_resume();
	hg_vec_restore(area);
	__asm__ volatile("" ::: "memory");
	t->in_rt = 0;
}

/* force_align_arg_pointer: trampolines run at any stack alignment, and the
 * C and Go code below assumes the ABI's 16 bytes. */
HG_SLOW __attribute__((force_align_arg_pointer)) void hg_flush_saving(struct hg_thread *t)
{
	if (t->in_rt || !hg_detect) {
		t->n = 0;
		return;
	}
	hg_saving(t, NULL, NULL, 0);
}

/* hg_call_saving is hg_flush_saving followed by fn(t, regs, info), for
 * the entry points' hooks that synchronise (annotations.c): fn may call
 * into the Go side. */
HG_SLOW __attribute__((force_align_arg_pointer)) void hg_call_saving(struct hg_thread *t, hg_saving_fn *fn, uint64_t *regs,
								      uint64_t info)
{
	if (t->in_rt || !hg_detect)
		return;
	hg_saving(t, fn, regs, info);
}

/* hg_event_quiet: the event (info, len) of thread t cannot change the
 * thread's clock on the Go side: a lock, or an unlock that publishes
 * nothing (no region's record, no nested hand-off), which change only
 * locksets there (runtime/detect, lockEvent); or an allocation, or a
 * release outside a region, whose shadow the C side reset already
 * (malloc.c), which the Go side only records (heapEvent: a release in a
 * region looks up the readers of the block, and may join them); or an
 * atomic's acquire of nothing new or a release the C side made, whose
 * tick it made too; or a component of the clock the C side raised
 * itself (hg_take_in), which changes the thread's row and joined_at
 * there at once, as the Go side's join would. A
 * program that allocates a message, fills it and pushes it on a queue
 * under a mutex then has its push published in C (regionpub.c). */
static int hg_event_quiet(const struct hg_thread *t, uint64_t info, uint64_t len)
{
	uint32_t kind = HG_INFO_FLAGS(info);
	if (kind == HG_LOCK)
		return !(len & (HG_LOCK_READS_FULL | HG_LOCK_WRITES_FULL | HG_LOCK_WAIT));
	if (kind == (HG_ALLOC | HG_RESET_DONE) || (kind == (HG_FREE | HG_RESET_DONE) && !t->recording))
		return 1;
	if ((kind == (HG_ATOMIC | HG_POST) && len == HG_ACQUIRE_KNOWN) || (kind == HG_ATOMIC && len == HG_RELEASE_KNOWN))
		return 1; /* a tick the C side made already (fastpath.c, hg_acquire_known, hg_release_known) */
	if (kind == (HG_ATOMIC | HG_POST) && len == HG_CLOCK_RAISE)
		return 1; /* a join the C side made already, row and all (fastpath.c, hg_take_in) */
	return kind == HG_UNLOCK && !(len & (HG_LOCK_RECORD | HG_LOCK_NESTED | HG_LOCK_WAIT | HG_LOCK_DESTROY));
}

/* hg_event buffers an event of the C wrappers (heap blocks, locks, memory
 * ranges). When the buffer is full it is flushed only if may_flush: a
 * wrapper called from inside a library (glibc may hold internal locks) must
 * not call into Go, so the event is dropped instead. The fast path buffers
 * its tick events with it too, from instrumented code, after making room
 * itself (fastpath.c, hg_tick_event): general registers only. */
__attribute__((target("general-regs-only"))) void hg_event(struct hg_thread *t, uint64_t addr, uint64_t info, uint64_t len,
						   int may_flush)
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
	if (!hg_event_quiet(t, info, len))
		t->go_pending = 1;
	/* the event is complete before it counts: a signal handler that
	 * flushes in between must not hand over a stale slot */
	__asm__ volatile("" ::: "memory");
	t->n++;
}
