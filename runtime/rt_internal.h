/* rt_internal.h: what the C files share with each other and with nothing
 * else: the thread-record plumbing between the entry points (fastpath.c)
 * and the thread records (threads.c), start.c's view of both, and the
 * wrappers' view of the address ranges (ranges.c).
 *
 * Unlike hgrt.h, this header is not part of the cgo preamble: the Go side
 * never sees these names. The symbols that used to be static in one file
 * are hidden (HG_INTERNAL: not exported from libhgrt.so), so that calls
 * and references across the files are direct calls and PC-relative
 * addresses. The entry points (hg_access, hg_range and what they call)
 * compile to the same code as before the split; the wrappers now call
 * hg_from_runtime (ranges.c) instead of inlining it, a few instructions
 * per intercepted call.
 */
#ifndef HG_RT_INTERNAL_H
#define HG_RT_INTERNAL_H
#include "hgrt.h"

#include <stddef.h>

/* HG_INTERNAL: a definition shared between the C files only. */
#define HG_INTERNAL __attribute__((visibility("hidden")))

/* The entry points and the functions they call. They are compiled for
 * general registers only and with no_caller_saved_registers: they preserve
 * every register they touch, so trampolines save only flags and the
 * argument registers. HG_FAST marks the entry points, HG_SLOW what they
 * call out of line. A declaration must carry the same attributes as its
 * definition: a caller that does not know a callee preserves the registers
 * saves them itself. */
#define HG_FAST __attribute__((no_caller_saved_registers, target("general-regs-only"), used))
#define HG_SLOW __attribute__((no_caller_saved_registers, target("general-regs-only"), noinline))
/* A helper of the entry points: GCC inlines a function into one compiled
 * for general registers only only if it is compiled so too; otherwise it
 * stays a call, and the entry point saves every register it uses around
 * it. */
#define HG_INLINE __attribute__((target("general-regs-only"), always_inline))

/* HG_PLAIN: a function of the entry points' own with the usual calling
 * convention (its callers save what it may clobber), for the entry
 * points' assembly stubs (fastpath.c) to call: GCC then saves, inside,
 * only the callee-saved registers the path taken uses. */
#define HG_PLAIN __attribute__((target("general-regs-only"), noinline, visibility("hidden")))

/* fastpath.c: the entry points, stored in the header's slots by start.c:
 * hg_access and hg_access_batch are assembly stubs that preserve every
 * register but rdi, rsi and the flags (which the trampolines save) around
 * hg_access_c and hg_access_batch_c. */
void hg_access(uint64_t addr, uint64_t info);
void hg_access_batch(const uint64_t *pairs, uint64_t n);
HG_PLAIN void hg_access_c(uint64_t addr, uint64_t info, uint64_t sp);
HG_PLAIN void hg_access_batch_c(const uint64_t *pairs, uint64_t n);
HG_PLAIN void hg_access_any(uint64_t addr, uint64_t info, uint64_t sp);
HG_FAST void hg_range(uint64_t addr, uint64_t info, uint64_t count);

/* threads.c: the calling thread's record, NULL until hg_register made it.
 * Initial-exec TLS: one %fs-relative load on every access. */
extern __thread struct hg_thread *hg_self __attribute__((tls_model("initial-exec"))) HG_INTERNAL;

/* Calls into the Go side go between hg_go_enter and hg_go_leave (the
 * re-entrancy guard, in_rt). A thread the program made asynchronously
 * cancellable (pthread_setcanceltype, runtime/wrappers.c) is deferred-
 * cancellable in between: a cancellation that took it inside Go code left
 * the Go runtime's record of the thread (its M and g) half-changed, and
 * the thread's exit then spun forever in the Go runtime (dropm, from the
 * thread-specific-data destructors). A cancellation that came meanwhile
 * acts when the thread leaves, in C. */
extern __thread int hg_cancel_async __attribute__((tls_model("initial-exec"))) HG_INTERNAL;
int hg_cancel_defer(void) HG_INTERNAL;   /* 1: the thread was made deferred-cancellable */
void hg_cancel_resume(void) HG_INTERNAL; /* asynchronously cancellable again (a pending cancellation acts) */

static inline int hg_go_enter(struct hg_thread *t)
{
	t->in_rt = 1;
	return __builtin_expect(hg_cancel_async, 0) ? hg_cancel_defer() : 0;
}

static inline void hg_go_leave(struct hg_thread *t, int deferred)
{
	t->in_rt = 0;
	if (__builtin_expect(deferred, 0))
		hg_cancel_resume();
}

/* threads.c: the record shared by all threads once the arena is full; it
 * never buffers (in_rt is set) and its counters are updated atomically. */
extern struct hg_thread hg_overflow HG_INTERNAL;

/* threads.c: set up the arena of thread records (start.c, before anything
 * else). Exported like the other hg_ functions, as it always was. */
void hg_arena_init(void);

/* threads.c: create the calling thread's record; preserves every register
 * itself, so that calling it costs the entry points nothing on the common
 * path. */
HG_SLOW HG_INTERNAL struct hg_thread *hg_register(void);

/* threads.c: hg_flush for the entry points, which may interrupt code with
 * live values in any register: saves the vector state around the Go call. */
HG_SLOW HG_INTERNAL __attribute__((force_align_arg_pointer)) void hg_flush_saving(struct hg_thread *t);

/* threads.c: hg_flush_saving, then fn(t, regs, info) with in_rt set and
 * the vector state still saved: a hook of the entry points that calls
 * into the Go side (annotations.c). */
typedef void hg_saving_fn(struct hg_thread *t, uint64_t *regs, uint64_t info);
HG_SLOW HG_INTERNAL __attribute__((force_align_arg_pointer)) void hg_call_saving(struct hg_thread *t, hg_saving_fn *fn,
										 uint64_t *regs, uint64_t info);

/* annotations.c: the hooks of annotation calls and Valgrind client
 * requests (abi.HookAnnotate, abi.HookRequest), from hg_access */
HG_SLOW HG_INTERNAL void hg_annotate_hook(struct hg_thread *t, uint64_t addr, uint64_t info);

/* calltrace.c: the slot's offset (start-up), and the calling thread's
 * tracing into its id's ring, from when it knows the id until it has
 * finished. */
void hg_trace_init(struct hg_header *h);
HG_INTERNAL void hg_trace_own(int32_t tid);
HG_INTERNAL void hg_trace_detach(void);
/* calltrace.c: the calling thread's segment e begins (as markTrace in
 * runtime/epochs.go, for an epoch the C side moved: regionpub.c) */
HG_INTERNAL void hg_trace_mark_epoch(uint64_t e);

/* The hand-off tables as the Go side published them (fastpath.c,
 * hg_publish_handoff): [0] the published writes, [1] the reader log,
 * [2] the release stamps (struct hg_sync_stamp);
 * the address of each table's memory and its slots' bits. */
extern uintptr_t hg_handoff_keys[3] HG_INTERNAL;
extern uint32_t hg_handoff_bits[3] HG_INTERNAL;

/* The most thread ids a join in C looks through (fastpath.c,
 * hg_join_ready), and a clock the C side reads whole. */
#define HG_JOIN_TIDS 64

/* The first bytes of a hand-off table's memory (runtime/detect,
 * overHead): the overflow segment's id (0 while none), and the address
 * of its clock (a shadow.VC: its components' address and count in its
 * first two words) when it stands for any mutex, else 0, both written
 * under seq (odd while they change). */
struct hg_over_head {
	uint64_t id, any_clock, seq;
	/* the reader log's: the address of its ways' segments but for their
	 * epochs (readlog.go, rlRef: the clock snapshot, the first mutex, the
	 * more mutexes, a word each, per way); 0 for the published writes */
	uint64_t refs;
};
#define HG_RLREF_WORDS 3

/* One way of the reader log (runtime/detect/readlog.go, rlWay): the
 * granules a thread's regions read under a mutex, and the epoch of the
 * latest. seq is odd while a writer has the way: the Go side, or the C
 * side publishing a region's reads there (regionpub.c). */
struct hg_rlway {
	uint64_t seq, mutex, epoch, n;
	uint64_t keys[HG_RL_KEYS];
	uint64_t flags; /* HG_RL_CMADE */
};
#define HG_RL_CMADE 1 /* the way's clock snapshot is its thread's current one (readlog.go, rlCMade) */

/* A slot of the published writes' table (runtime/detect/segtable.go,
 * segSlotMem): 8 ways of (key, epoch), then the slot's meta: the
 * writers' lock (seq odd while taken), the ways written in C (a bit
 * each: their snapshot is their thread's current one), each way's first
 * mutex, and when each way was written last, in writes to the slot
 * (puts). */
struct hg_wslot {
	uint64_t way[8][2];
	uint64_t seq, cmade;
	uint64_t mutex[8];
	uint32_t used[8];
	uint32_t puts, pad;
	uint64_t refs; /* the slot's segRefs in the Go heap: way i's clock snapshot (a shadow.VC) at refs + 8 i */
};
_Static_assert(sizeof(struct hg_wslot) == 256, "segSlotMem");
/* A slot's segRefs (at its refs): a way's clock snapshot (a shadow.VC)
 * at refs + 8 way, then, at HG_SEGREFS_MORE, the address of the ways'
 * segMore pointers (0 while no way has one), 8 bytes a way: a segment
 * published under more mutexes than one has one (TestSegRefsLayout). */
#define HG_SEGREFS_MORE 64

/* hg_vc_header reads the header of the shadow.VC at vc (a clock the Go
 * side keeps in its heap; shadow.TestVCLayout): the address of its
 * components, in its first word, into *c, and their count, in its
 * second, into *n. 0 when the count is past hw, or there are
 * components and no address (a header read while it changed). */
HG_INLINE static inline int hg_vc_header(uintptr_t vc, uint64_t hw, const uint64_t **c, uint64_t *n)
{
	*c = (const uint64_t *)__atomic_load_n((uintptr_t *)vc, __ATOMIC_RELAXED);
	*n = __atomic_load_n((uint64_t *)vc + 1, __ATOMIC_RELAXED);
	return *n <= hw && (*n == 0 || *c);
}

/* hg_wkey is the key of the variable at addr in the published writes
 * (runtime/detect, wrKey: by exact address, 0 being a free way). */
HG_INLINE static inline uint64_t hg_wkey(uint64_t addr)
{
	return addr + 1;
}

/* hg_wslot_of is key's slot of the published writes, whose memory is at
 * base (hg_handoff_keys[0]; runtime/detect, segSlotIndex). */
HG_INLINE static inline struct hg_wslot *hg_wslot_of(uintptr_t base, uint64_t key)
{
	return (struct hg_wslot *)(base + 64) + hg_hash(key >> 2, hg_handoff_bits[0]);
}

/* hg_vc_read_seq reads the clock of the shadow.VC at vc into out[0..hw)
 * (0 past its components) as a reader of the sequence word seq, which
 * read q (even) before it found vc: it follows vc only while seq still
 * says q, since a clock no writer names any more may be collected. 0 when
 * vc is 0, seq moved, or the clock reaches past hw thread ids. */
HG_INLINE static inline int hg_vc_read_seq(const uint64_t *seq, uint64_t q, uintptr_t vc, uint64_t hw, uint64_t *out)
{
	const uint64_t *c;
	uint64_t n;
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (!vc || __atomic_load_n(seq, __ATOMIC_RELAXED) != q)
		return 0;
	int ok = hg_vc_header(vc, hw, &c, &n);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (__atomic_load_n(seq, __ATOMIC_RELAXED) != q || !ok)
		return 0;
	for (uint64_t u = 0; u < hw; u++)
		out[u] = u < n ? __atomic_load_n(&c[u], __ATOMIC_RELAXED) : 0;
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __atomic_load_n(seq, __ATOMIC_RELAXED) == q;
}

/* A thread's snapshot ring (hg_tstate's snaps): the clocks under which
 * its C side published regions (regionpub.c, hg_snap_push), newest last.
 * A hand-off way the C side wrote (a slot's cmade bit, a reader-log way's
 * HG_RL_CMADE) names its clock by its epoch alone: it is the entry of the
 * epoch's thread with the greatest `from` not past the epoch's clock (a
 * thread's clock changes, but for its own component, only at joins, and
 * the C side pushes an entry at its first publication after each). Only
 * the thread writes its ring; the k-th entry pushed sits at k % HG_SNAPS,
 * its seq 2k + 1 while it is written and 2k + 2 after. A reader whose
 * entry has gone (the ring went round) takes the oldest one left, a later
 * clock of the same thread: it may order the reader after more than the
 * region did, and miss a race, as the tables' overflow may. */
struct hg_snap {
	uint64_t seq;
	uint64_t from; /* the thread's clock at the push (HG_CELL_CLOCK bits) */
	uint64_t n;    /* components held */
	uint64_t c[];  /* the ring's cap of them */
};
struct hg_snaps {
	uint64_t cap;  /* components an entry holds, set before the ring is published */
	uint64_t head; /* entries pushed */
};

HG_INLINE static inline struct hg_snap *hg_snap_entry(const struct hg_snaps *r, uint64_t k)
{
	return (struct hg_snap *)((char *)(uintptr_t)(r + 1) + (k % HG_SNAPS) * (3 + r->cap) * 8);
}

/* hg_snap_at reads into out[0..hw) the clock of thread u's C-made ways at
 * its clock c (hg_snaps), u's own component c. 0 when u has no ring, the
 * entry holds more than hw components, or the entry changed while read. */
HG_INLINE static inline int hg_snap_at(uint64_t u, uint64_t c, uint64_t hw, uint64_t *out)
{
	const struct hg_snaps *r = (const struct hg_snaps *)(uintptr_t)__atomic_load_n(&hg_tstate[u].snaps, __ATOMIC_ACQUIRE);
	if (!r || u >= hw)
		return 0;
	uint64_t h = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE), lo = h > HG_SNAPS ? h - HG_SNAPS : 0, k = h;
	int64_t pick = -1;
	while (k-- > lo) {
		const struct hg_snap *e = hg_snap_entry(r, k);
		if (__atomic_load_n(&e->seq, __ATOMIC_ACQUIRE) != 2 * k + 2)
			break; /* being overwritten: so are the older ones */
		uint64_t from = __atomic_load_n(&e->from, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&e->seq, __ATOMIC_RELAXED) != 2 * k + 2)
			break;
		pick = (int64_t)k;
		if (from <= c)
			break;
	}
	if (pick < 0)
		return 0;
	const struct hg_snap *e = hg_snap_entry(r, (uint64_t)pick);
	uint64_t q = 2 * (uint64_t)pick + 2;
	if (__atomic_load_n(&e->seq, __ATOMIC_ACQUIRE) != q)
		return 0;
	uint64_t n = __atomic_load_n(&e->n, __ATOMIC_RELAXED);
	if (n > hw || n > r->cap)
		return 0;
	for (uint64_t v = 0; v < hw; v++)
		out[v] = v < n ? __atomic_load_n(&e->c[v], __ATOMIC_RELAXED) : 0;
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (__atomic_load_n(&e->seq, __ATOMIC_RELAXED) != q)
		return 0;
	out[u] = c;
	return 1;
}

/* hg_snap_at_seq is hg_snap_at for a way of a hand-off table read as a
 * reader of its sequence word seq, which read q (even) before: 0 also
 * when seq moved meanwhile. */
HG_INLINE static inline int hg_snap_at_seq(uint64_t u, uint64_t c, uint64_t hw, uint64_t *out, const uint64_t *seq, uint64_t q)
{
	if (!hg_snap_at(u, c, hw, out))
		return 0;
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __atomic_load_n(seq, __ATOMIC_RELAXED) == q;
}

/* hg_way_clock reads into out[0..hw) the clock of way w of slot s, whose
 * epoch names thread u at clock c, as a reader of the slot's seq that
 * read q (even) before it found the way: from u's snapshot ring for a
 * way the C side wrote, else the snapshot the slot's refs hold. 0 when
 * there is none, or seq moved. */
HG_INLINE static inline int hg_way_clock(const struct hg_wslot *s, int w, uint64_t u, uint64_t c, uint64_t q, uint64_t hw, uint64_t *out)
{
	if (__atomic_load_n(&s->cmade, __ATOMIC_RELAXED) & (1ull << w))
		return hg_snap_at_seq(u, c, hw, out, &s->seq, q);
	uintptr_t refs = __atomic_load_n(&s->refs, __ATOMIC_RELAXED);
	uintptr_t vc = refs ? __atomic_load_n((uintptr_t *)(refs + 8 * (uint64_t)w), __ATOMIC_RELAXED) : 0;
	return hg_vc_read_seq(&s->seq, q, vc, hw, out);
}

/* The C library's allocator under the wrappers (malloc.c), for the
 * runtime's own blocks, which the program's heap records must not hold. */
extern void *__libc_malloc(size_t);
extern void __libc_free(void *);

/* regionpub.c: the region of mutex m that t is ending was published in
 * C and t moved to its next segment (1), or the Go side must publish it
 * (0); cvm: m is used with condition variables (hg_cvm_is), so the
 * region may push its thread's clock onto the snapshot ring.
 * hg_region_quiet: the C side may publish it, as far as the region
 * itself tells (hg_region_publish checks it again, and the tables). */
HG_INTERNAL int hg_region_publish(struct hg_thread *t, uint64_t m, int cvm);
HG_INTERNAL int hg_region_quiet(struct hg_thread *t, uint64_t m);

/* fastpath.c: t knows the published segments of the reads its region
 * recorded from index from on, and *found says whether any has one
 * (hg_reads_known); a signal's release on cv made in C
 * (hg_cv_release_c, 0: the Go side's to make). */
HG_INTERNAL int hg_reads_known(struct hg_thread *t, int from, int *found);
HG_INTERNAL int hg_cv_release_c(struct hg_thread *t, uint64_t cv);

/* The clock bits of a cell epoch (hg_tstate), and whether the C side may
 * begin a segment after one at epoch: past half of those bits, the Go
 * side does, since a cell epoch may have dropped clock bits. */
#define HG_CELL_CLOCK ((1ull << SH_TOUCHED_SHIFT) - 1)

/* hg_seq_take takes a writers' sequence word (odd while taken) of a
 * table the Go side shares (runtime/detect, seqWord), its value before
 * in *q, or fails (0) while another writer holds it; the taker gives it
 * back by storing *q + 2 (release). */
HG_INLINE static inline int hg_seq_take(uint64_t *seq, uint64_t *q)
{
	*q = __atomic_load_n(seq, __ATOMIC_RELAXED);
	return !(*q & 1) && __atomic_compare_exchange_n(seq, q, *q + 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}
HG_INLINE static inline int hg_clock_room(uint64_t epoch)
{
	return (epoch & HG_CELL_CLOCK) < HG_CELL_CLOCK / 2;
}

/* hg_held_find is m's entry in the lock view's table of t's held mutexes
 * (lockview.c), -1 when the table does not hold it: an entry is a mutex
 * t holds (a count of at least 1). */
HG_INLINE static inline int hg_held_find(const struct hg_thread *t, uint64_t m)
{
	for (int i = 0; i < t->nheld_tab; i++)
		if (t->held_m[i] == m)
			return i;
	return -1;
}

/* regionpub.c: t's next segment begins on the C side, as the Go side's
 * tick would begin it (1); 0 when the Go side must (the clock is about
 * to outgrow a cell's bits). The Go side's clock follows when it
 * processes an event that says so (HG_LOCK_TICKED, HG_ACQUIRE_KNOWN),
 * which the caller buffers. */
HG_INTERNAL int hg_begin_segment(struct hg_thread *t);

/* The release stamps of synchronisation objects (runtime/detect/sync.go,
 * syncClocks): a slot per hash of the object's address, rewritten at
 * every release on an object of the slot: the stamp grows by one at each
 * (never 0 once written), then the key names the object. Its writers
 * take seq (odd while taken), the Go side's also a mutex. pend is a
 * release the C side made on key's object (tid << 48 | clock, 0 if
 * none), which the Go side folds into the object's clock. small holds
 * the object's clock, its count in meta's low byte, when meta says
 * HG_SYNC_SMALL_VALID (pend aside): written by the Go side at each
 * release, and by the C side's releases (fastpath.c, hg_slot_release), which
 * set HG_SYNC_SMALL_C until the Go side folds them in. */
/* the clock bits of a table epoch, tid << 48 | clock (a cell epoch's:
 * HG_CELL_CLOCK) */
#define HG_WAY_CLOCK ((1ull << 48) - 1)

struct hg_sync_stamp {
	uint64_t key, stamp, seq, pend, meta;
	uint64_t small[HG_SYNC_SMALL];
};
_Static_assert(sizeof(struct hg_sync_stamp) == 128, "syncStamp");

/* remote.c: the detector is a process of its own (a forked child) */
HG_INTERNAL int hg_remote_on(void);

/* ranges.c: ra is code of this library (the wrappers let such calls pass
 * straight through). */
HG_INTERNAL int hg_from_runtime(void *ra);

/* hg_walk_objects is the real dl_iterate_phdr (loader.c), for the
 * runtime's own walks, whose callbacks call nothing wrapped. */
struct dl_phdr_info;
HG_INTERNAL int hg_walk_objects(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data);

#endif
