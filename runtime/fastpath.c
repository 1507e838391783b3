/* fastpath.c: the entry points trampolines call.
 *
 * They run on every instrumented memory access, so they stay in C (a
 * C-to-Go call costs ~100 ns; see docs/architecture.md): an access is counted and
 * appended to the thread's event buffer, which is handed to the Go side when
 * it is full, at every synchronisation operation (wrappers.c) and at every
 * atomic access. Because of that, all events in a buffer belong to the
 * thread's current segment and lockset, and the Go side processes the
 * events of two ordered accesses in their order.
 *
 * The entry points are compiled for general registers only and with
 * no_caller_saved_registers: they preserve every register they touch, so
 * trampolines save only flags and the argument registers (rt_internal.h,
 * HG_FAST and HG_SLOW). The flush from here (hg_flush_saving, threads.c)
 * saves the vector state (xsave) before it calls into Go.
 *
 * It owns only what runs per access: the entry points (hg_access,
 * hg_range), their slow path (hooks, spinning-read loops, atomics), the
 * fast path over shadow memory (hg_granule, hg_handled) and the recording
 * of a lock-protected region's accesses (hg_record). The thread records
 * and the flush to Go are threads.c's.
 */
#define _GNU_SOURCE
#include "rt_internal.h"

#include <stddef.h>
#include <sys/mman.h>

/* The fast path's view of the detector (hgrt.h); the shadow directory is
 * shadow.c's. */
int hg_detect;
/* page aligned: a forked child maps memory shared with its detector
 * process over them (remote.c) */
struct hg_tstate hg_tstate[HG_MAX_THREADS] __attribute__((aligned(4096)));
_Static_assert(sizeof(struct hg_tstate) == 64, "a row per cache line");
_Static_assert(sizeof hg_tstate == HG_PUB_BYTES, "remote.c shares hg_tstate whole");
uint32_t hg_tset_gen = 1; /* entries of zeroed records (0) are of no generation */
uint64_t hg_lsm[(uint64_t)HG_LSM_IDS * SH_LOCKSET_MIRROR_WORDS] __attribute__((aligned(64)));
int hg_lsm_off;
uint64_t *hg_clocks;

/* hg_clock_row: the rows are one reservation of HG_MAX_THREADS squared
 * entries (32 GiB of address space), of which a thread's row uses the
 * pages its clock's length reaches. */
uint64_t *hg_clock_row(int32_t tid)
{
	static uint64_t *rows;
	if (tid < 0 || tid >= HG_MAX_THREADS)
		return NULL;
	if (!rows) { /* under the detector's table lock: one caller at a time */
		void *p = mmap(NULL, (size_t)HG_MAX_THREADS * HG_MAX_THREADS * 8, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p == MAP_FAILED)
			return NULL;
		rows = p;
		__atomic_store_n(&hg_clocks, rows, __ATOMIC_RELEASE);
	}
	return rows + (size_t)tid * HG_MAX_THREADS;
}

/* a lockset the fast path does not know (hg_thread_locks): no cell's */
#define HG_LOCKS_UNKNOWN 0xfffffffeu

__attribute__((target("general-regs-only"))) static inline void hg_add(uint64_t *p, uint64_t n, struct hg_thread *t)
{
	if (__builtin_expect(t == &hg_overflow, 0))
		__atomic_fetch_add(p, n, __ATOMIC_RELAXED);
	else
		*p += n; /* only this thread writes its record */
}

/* hg_handled applies, without the Go side, the transitions that only
 * involve the accessing thread: a cell in Exclusive-Read or Exclusive-Write
 * whose last access was by this thread (in this or an earlier segment) moves
 * to Exclusive-Read or Exclusive-Write with the current epoch, exactly as
 * both state machines do when the previous access happens before this one.
 * A read after a write in the same segment keeps Exclusive-Write (see
 * detector.access). The owner's lockset E_d in word 1 (msm, choice 13)
 * follows: in a new segment it becomes the access's lockset, in the same
 * one it meets it (here when the meet needs no lockset table:
 * hg_granule). Most accesses to thread-private data end here. So do a location's first
 * access (hg_new_cell), and an access to a shared
 * location that would leave it unchanged (hg_shared_unchanged). It returns
 * 0, and the event goes to the Go side, for anything else.
 *
 * The update is a compare-and-swap of word 0 without the Go side's stripe
 * lock; the Go side's steps change word 0 with a compare-and-swap too and
 * start again when the fast path changed it meanwhile, so neither update
 * is lost (runtime/detect, Detector.step). The access history used in
 * reports follows every change of state made here (hg_history), after
 * the state (before it for a first access). */
/* hg_cell is the shadow cell of the granule holding addr, or NULL while
 * the shadow memory or the granule's chunk is not mapped yet (the Go side
 * maps it: shadow.Memory.Cell). */
__attribute__((target("general-regs-only"), always_inline)) static inline uint64_t *hg_cell(uint64_t addr)
{
	uintptr_t *dir = __atomic_load_n(&hg_shadow_dir, __ATOMIC_ACQUIRE);
	if (!dir || addr >= SH_MAX_ADDR)
		return NULL;
	uintptr_t chunk = __atomic_load_n(&dir[addr >> SH_CHUNK_SHIFT], __ATOMIC_ACQUIRE);
	if (!chunk)
		return NULL;
	return (uint64_t *)(chunk + ((addr >> SH_GRANULE_SHIFT) & (SH_GRANULES_PER_CHUNK - 1)) * SH_CELL_BYTES);
}

/* hg_first_bytes and hg_next_bytes walk an access granule by granule:
 * the bytes (a mask of SH_GRANULE bits) it covers in its first granule,
 * from offset off, and in a later one, with left bytes to cover from that
 * granule's start. */
HG_INLINE static inline uint64_t hg_first_bytes(uint64_t off, uint64_t size)
{
	return off + size > SH_GRANULE ? (SH_GRANULE_BYTES << off) & SH_GRANULE_BYTES : ((1ull << size) - 1) << off;
}

HG_INLINE static inline uint64_t hg_next_bytes(uint64_t left)
{
	return left >= SH_GRANULE ? SH_GRANULE_BYTES : (1ull << left) - 1;
}

/* hg_access_tid is the thread of a history word. */
HG_INLINE static inline uint64_t hg_access_tid(uint64_t h) { return (h >> SH_ACCESS_TID_SHIFT) & HG_CELL_TID_MASK; }

/* hg_byte_count is the number of bytes in a granule's byte mask (its
 * set bits): __builtin_popcountll is a call into libgcc without the
 * POPCNT instruction, which the x86-64 baseline lacks (1% of pigz's
 * samples, whose buffers reach the range walk). */
HG_INLINE static inline uint64_t hg_byte_count(uint64_t b)
{
	b = (b & 0x55) + ((b >> 1) & 0x55);
	b = (b & 0x33) + ((b >> 2) & 0x33);
	return (b & 0x0f) + ((b >> 4) & 0x0f);
}

/* hg_access_word packs an access for a cell's history (words 2 and 3,
 * shadow/cell.go) as runtime/detect does: m is the bytes the access covers
 * in the granule, in place in word 0. */
__attribute__((target("general-regs-only"))) static inline uint64_t hg_access_word(uint64_t info, uint64_t tid, uint64_t m,
										  uint64_t locks)
{
	if (locks >= SH_ACCESS_LOCKS_UNKNOWN)
		locks = SH_ACCESS_LOCKS_UNKNOWN;
	uint64_t pc = HG_INFO_PC(info), size = HG_INFO_SIZE(info);
	uint64_t off = (uint64_t)__builtin_ctzll(m >> SH_TOUCHED_SHIFT);
	/* log2 of the size, rounded up, at most 7 */
	uint64_t lg = size <= 1 ? 0 : size > 64 ? 7 : 64 - (uint64_t)__builtin_clzll(size - 1);
	if (pc >= 1ull << SH_ACCESS_PC_BITS)
		pc = 0;
	uint64_t acc = pc | tid << SH_ACCESS_TID_SHIFT |
		       (uint64_t)(HG_INFO_FLAGS(info) & (HG_READ | HG_WRITE | HG_ATOMIC)) << SH_ACCESS_FLAG_SHIFT |
		       lg << SH_ACCESS_SIZE_SHIFT | off << SH_ACCESS_OFF_SHIFT | locks << SH_ACCESS_LOCKS_SHIFT;
	/* A granule that a longer access covers in part (an unaligned word's
	 * ends) records the number of its bytes covered, as
	 * shadow.PackAccessBytes does: read as a first byte and a size, they
	 * would claim bytes the access did not touch, and a report would pair
	 * accesses that do not overlap. */
	uint64_t bytes = (m >> SH_TOUCHED_SHIFT) & SH_GRANULE_BYTES;
	uint64_t natural = off + (1ull << lg) > SH_GRANULE ? SH_GRANULE_BYTES : ((1ull << (1ull << lg)) - 1) << off;
	if (natural != bytes)
		acc = (acc & ~(7ull << SH_ACCESS_SIZE_SHIFT)) | (uint64_t)SH_ACCESS_PART_BIT |
		      (uint64_t)(hg_byte_count(bytes) - 1) << SH_ACCESS_SIZE_SHIFT;
	return acc;
}

/* hg_access_bytes is the bytes of its granule (a mask) that the history
 * word w names: shadow.AccessBytes. */
HG_INLINE static inline uint64_t hg_access_bytes(uint64_t w)
{
	uint64_t off = (w >> SH_ACCESS_OFF_SHIFT) & (SH_GRANULE - 1), sz = (w >> SH_ACCESS_SIZE_SHIFT) & 7;
	if (w & SH_ACCESS_PART_BIT)
		return (((1ull << (sz + 1)) - 1) << off) & SH_GRANULE_BYTES;
	if (off + (1ull << sz) > SH_GRANULE)
		return SH_GRANULE_BYTES; /* it spans granules: all of this one */
	return ((1ull << (1ull << sz)) - 1) << off;
}

/* hg_history: the fast path changed the cell's state (a new segment of the
 * same thread, or a write after reads); the cell's access history (words 2
 * and 3, runtime/detect's step and remember) learns of the access, so that
 * a later report names it. It runs once per location and segment at
 * most, but that is every access of a program that touches new data in
 * each phase (a stencil between barriers): inline, where the registers
 * are saved already (hg_access_any, not hg_access). */
__attribute__((target("general-regs-only"), always_inline)) static inline void
hg_history(uint64_t *cell, uint64_t info, uint64_t tid, uint64_t m, uint64_t locks, uint64_t old_epoch, int same)
{
	uint64_t acc = hg_access_word(info, tid, m, locks);
	/* runtime/detect's remember and keepOwn: the owner's previous access
	 * stays, in word 3, when it is of the same segment and differs in
	 * kind, bytes or locks, or when this access is of a later segment and
	 * only reads what it wrote, or leaves bytes of it untouched. Word 1's upper half then takes the clock of its
	 * segment (detect's pastClock), with a compare-and-swap that keeps
	 * the owner's lockset and gives way to a Go-side step changing the
	 * cell at this moment. Another thread's access in word 2 (its step
	 * raced with this one) is not moved. */
	uint64_t latest = cell[2];
	const uint64_t key = ~0ull << SH_ACCESS_FLAG_SHIFT; /* kind, bytes, locks */
	int own = latest != 0 && hg_access_tid(latest) == tid;
	int move = own && (same ? ((latest ^ acc) & key) != 0
				: (((latest >> SH_ACCESS_FLAG_SHIFT) & HG_WRITE) && !(HG_INFO_FLAGS(info) & HG_WRITE)) ||
					  (hg_access_bytes(latest) & ~(m >> SH_TOUCHED_SHIFT)) != 0);
	if (move) {
		/* An older clock of this thread's own, already there, stays: a
		 * clock smaller than the access's only hides races (a thread
		 * ordered after it counts as ordered), never makes one up, and
		 * it spares a locked instruction per location and segment on
		 * data a thread writes and reads back phase after phase. */
		uint64_t c3 = cell[3], w1 = __atomic_load_n(&cell[1], __ATOMIC_RELAXED);
		int own_clock = c3 != 0 && hg_access_tid(c3) == tid && (w1 >> 32) != 0;
		cell[3] = latest;
		if (!own_clock) {
			uint64_t clock = old_epoch & ((1ull << SH_TOUCHED_SHIFT) - 1);
			uint64_t nw1 = (w1 & 0xffffffffull) | (clock < (1ull << 32) ? clock << 32 : 0);
			__atomic_compare_exchange_n(&cell[1], &w1, nw1, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
		}
	}
	cell[2] = acc;
}

/* hg_move_begin and hg_move_end bracket a move of a cell to t's segment
 * (its own cell's, hg_history; another thread's it takes over,
 * hg_take_over; a shared one it writes, hg_shared_write): word 0 by
 * compare-and-swap, then words 1 to 3. A Go-side
 * step of another thread that reads the cell in between sees the new
 * state with the old lockset and history; it finds the cell in t's
 * row's moving (hg_tstate) and waits until it is not (runtime/detect,
 * ownerMoves). Plain stores to t's own row: the compare-and-swap makes the first
 * visible before word 0 changes, and x86 keeps the history's stores
 * before the second. hg_move_end gives back what hg_move_begin found
 * there (a signal handler's access may move a cell inside a move). */
__attribute__((target("general-regs-only"), always_inline)) static inline uint64_t *hg_moving(const struct hg_thread *t)
{
	return &t->row->moving;
}

__attribute__((target("general-regs-only"), always_inline)) static inline uint64_t hg_move_begin(uint64_t *moving,
												 uint64_t *cell)
{
	uint64_t outer = *moving;
	__atomic_store_n(moving, (uint64_t)(uintptr_t)cell, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST); /* before the compare-and-swap, in the compiler too */
	return outer;
}

__attribute__((target("general-regs-only"), always_inline)) static inline void hg_move_end(uint64_t *moving,
											   uint64_t outer)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST); /* after the history's stores */
	__atomic_store_n(moving, outer, __ATOMIC_RELEASE);
}

/* hg_forgets: an access of thread tid to the bytes m (in place in word
 * 0) of a cell it owns in its current segment, which changes nothing
 * else, would be forgotten: it covers part of the granule only, and no
 * access of the thread in the history (words 2 and 3) covers its bytes.
 * Two variables written by one store and then used one by each of two
 * threads are one location: the consumer's read of the second, after a
 * take-over that its read of the first made, left the producer's later
 * write of it no partner (runtime/detect, remembered). An access of the
 * whole granule is left as it is: a stencil's every access would pay. */
HG_INLINE static inline int hg_forgets_part(const uint64_t *cell, uint64_t tid, uint64_t m)
{
	uint64_t bytes = (m >> SH_TOUCHED_SHIFT) & SH_GRANULE_BYTES, have = 0;
	uint64_t c2 = __atomic_load_n(&cell[2], __ATOMIC_RELAXED), c3 = __atomic_load_n(&cell[3], __ATOMIC_RELAXED);
	if (c2 && hg_access_tid(c2) == tid)
		have = hg_access_bytes(c2);
	if (c3 && hg_access_tid(c3) == tid)
		have |= hg_access_bytes(c3);
	return (bytes & ~have) != 0;
}

HG_INLINE static inline int hg_forgets(const uint64_t *cell, uint64_t tid, uint64_t m)
{
	return __builtin_expect((m & SH_TOUCHED_MASK) != SH_TOUCHED_MASK, 0) && hg_forgets_part(cell, tid, m);
}

/* hg_remember puts such an access (hg_forgets) into the history of the
 * cell, word 0 v, as a move would (hg_history, in the same segment),
 * bracketed as one (hg_move_begin): word 0 does not change, so a Go-side
 * step of another thread that read it before the bracket may write the
 * history at the same moment, and one of the two accesses is then not
 * remembered (see docs/detector.md, "Known gaps"). */
HG_SLOW static void hg_remember(struct hg_thread *t, uint64_t *cell, uint64_t v, uint64_t m, uint64_t info, uint32_t locks)
{
	uint64_t outer = hg_move_begin(hg_moving(t), cell);
	if (__atomic_load_n(cell, __ATOMIC_RELAXED) == v)
		hg_history(cell, info, (v >> SH_TID_SHIFT) & HG_CELL_TID_MASK, m, locks, v & ~SH_TOUCHED_MASK, 1);
	hg_move_end(hg_moving(t), outer);
}

/* hg_unchanged_own settles an access of the thread's (hg_granule) that
 * leaves its own cell, word 0 v, as it is: remembered if it would be
 * forgotten (hg_forgets), for a cell of its own granule (tm == m; a
 * split granule's side cell takes the whole access's bytes). */
HG_INLINE static inline int hg_unchanged_own(struct hg_thread *t, uint64_t *cell, uint64_t v, uint64_t epoch, uint64_t m,
					     uint64_t tm, uint64_t info, uint32_t locks)
{
	if (tm == m && hg_forgets(cell, epoch >> SH_TID_SHIFT, m))
		hg_remember(t, cell, v, m, info, locks);
	return 1;
}

/* hg_own_next is word 0 of a cell of the thread's (word 0 v) after an
 * access of the bytes m that moves it to the thread's segment epoch
 * (hg_granule, hg_own_move): Exclusive-Write for a write or a cell that
 * is written in this segment already, else Exclusive-Read; the bytes join
 * the touched mask (shadow/split.go). */
__attribute__((target("general-regs-only"), always_inline)) static inline uint64_t hg_own_next(uint64_t v, uint64_t epoch,
											       uint64_t m, uint32_t write)
{
	uint64_t w = (uint64_t)SH_EXCL_WRITE << SH_STATE_SHIFT | epoch;
	return (write || (v & ~SH_TOUCHED_MASK) == w ? w : (uint64_t)SH_EXCL_READ << SH_STATE_SHIFT | epoch) |
	       (v & SH_TOUCHED_MASK) | m;
}

/* hg_member: the threadset id s is known to hold t (hgrt.h, tsets). */
__attribute__((target("general-regs-only"), always_inline)) static inline int hg_member(struct hg_thread *t, uint32_t s)
{
	uint64_t gen = __atomic_load_n(&hg_tset_gen, __ATOMIC_RELAXED);
	return t->tsets[s & (HG_TSETS - 1)] == (gen << 32 | s);
}

/* hg_shared_write: a write under the locks of C_d to a location in
 * MSM-short's Shared-Modified, by a thread of S_d, in a later segment than
 * TS_d: TS_d becomes the write's segment and nothing else changes (msm,
 * choice 12). The history takes the write as runtime/detect's remember
 * does (the latest access stays in word 3 unless it is this thread's). */
HG_SLOW static int hg_shared_write(uint64_t *cell, uint64_t v, uint64_t epoch, uint64_t m, uint64_t info, uint32_t locks)
{
	uint64_t self = (epoch >> SH_TID_SHIFT) & HG_CELL_TID_MASK;
	uint64_t next = (uint64_t)SH_SHARED_MODIFIED << SH_STATE_SHIFT | epoch | (v & SH_TOUCHED_MASK);
	uint64_t latest = cell[2], other = cell[3];
	if (!__atomic_compare_exchange_n(cell, &v, next, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return 0;
	if (latest && hg_access_tid(latest) != self)
		cell[3] = latest;
	else
		cell[3] = other;
	cell[2] = hg_access_word(info, self, m, locks);
	return 1;
}

/* hg_lockset_within: every lock of lockset a is in lockset b (ids
 * other than 0), as the Go side's copy of the two tells (hg_lsm): then
 * a ∩ b = a, and a location whose lockset is a keeps it when b's holder
 * accesses it. memcached holds an item's lock alone and together with a
 * list's lock; the item's fields, whose lockset is the item's lock, went
 * to the Go side at every access made under both (half a million in ten
 * seconds of load). 0 when it is not so, or either set is not copied
 * (more than SH_LOCKSET_MIRROR_WORDS - 1 locks, an id past the copy,
 * SH_ANY_LOCKS, HG_LOCKS_UNKNOWN, a forked child). */
HG_INLINE static inline int hg_lockset_within(uint32_t a, uint32_t b)
{
	if (a >= HG_LSM_IDS || b >= HG_LSM_IDS || hg_lsm_off)
		return 0;
	const uint64_t *ea = &hg_lsm[(uint64_t)a * SH_LOCKSET_MIRROR_WORDS];
	const uint64_t *eb = &hg_lsm[(uint64_t)b * SH_LOCKSET_MIRROR_WORDS];
	uint64_t na = __atomic_load_n(&ea[0], __ATOMIC_ACQUIRE), nb = __atomic_load_n(&eb[0], __ATOMIC_ACQUIRE);
	if (na == 0 || na > nb || nb >= SH_LOCKSET_MIRROR_WORDS)
		return 0;
	for (uint64_t i = 1; i <= na; i++) {
		uint64_t x = __atomic_load_n(&ea[i], __ATOMIC_RELAXED), j = 1;
		while (j <= nb && __atomic_load_n(&eb[j], __ATOMIC_RELAXED) != x)
			j++;
		if (j > nb)
			return 0;
	}
	return 1;
}

/* hg_shared_unchanged: an access to a shared location (state vt >> 60,
 * word 1 w1) that the state machine would leave as it is (detect's
 * unchanged): the thread is in the threadset S_d already and holds every
 * lock of C_d (C_d ∩ L_t = C_d, known here when the two ids are equal,
 * when the copy of the locksets says so (hg_lockset_within), or when C_d
 * is empty for a read in Shared-Read); in MSM-short's Shared-Modified
 * a write must be of the segment TS_d names, which it moves otherwise.
 * Inside a lock-protected region only when the hand-off tables hold
 * nothing new for the access (hg_handoff_quiet). It returns 1 when the
 * access changes nothing, 2 for a write that only moves TS_d
 * (hg_shared_write), else 0. */
__attribute__((target("general-regs-only"), always_inline)) static inline int
hg_shared_unchanged(struct hg_thread *t, uint64_t vt, uint64_t w1, uint64_t epoch, uint32_t write, uint32_t locks)
{
	uint64_t state = vt >> SH_STATE_SHIFT;
	uint32_t cd = (uint32_t)w1;
	int ok;
	switch (state) {
	case SH_SHARED_READ:
		ok = !write && (cd == 0 || cd == locks || hg_lockset_within(cd, locks));
		break;
	case SH_SHARED_MODIFIED:
		ok = cd != 0 && (cd == locks || hg_lockset_within(cd, locks));
		if (ok && write && (vt & ((1ull << SH_STATE_SHIFT) - 1)) != epoch)
			return hg_member(t, (uint32_t)(w1 >> 32)) ? 2 : 0; /* TS_d follows the write (hg_shared_write) */
		break;
	case SH_SHARED_MODIFIED1:
	case SH_SHARED_MODIFIED2:
		ok = cd != 0 && (cd == locks || hg_lockset_within(cd, locks));
		break;
	default:
		return 0;
	}
	return ok && hg_member(t, (uint32_t)(w1 >> 32));
}

/* hg_new_cell: the first access to a location since its reset (word 0 is
 * zero: New, nothing touched) makes it the thread's: Exclusive-Read or
 * Exclusive-Write with the current epoch, and the access's locks as the
 * owner's lockset E_d (msm: New; word 1 takes locks, none: 0).
 *
 * Word 0 changes by compare-and-swap inside a move (hg_move_begin), and
 * words 1 and 2 follow, as a take-over writes them: a Go-side step of
 * another thread that sees the new state waits for the move's end
 * (runtime/detect, moverMoves) and then finds this access in the history
 * to pair a race with; an access that loses word 0 to such a step writes
 * nothing and goes to the Go side after it. Until 2026-11-27 the history
 * went first, by a compare-and-swap of its own into an empty word: two
 * locked instructions per new granule. hg_new_cell is a sixth of pigz
 * -11's time (zopfli allocates its arrays anew in every iteration), most
 * of it the first touch of the cell's line; the second locked
 * instruction was about 2% of it. tm is the touched mask
 * the cell takes: m, or every byte for a split granule's side cell
 * (hg_split_granule). */
HG_SLOW static int hg_new_cell(struct hg_thread *t, uint64_t *cell, uint64_t epoch, uint64_t m, uint64_t tm,
			       uint32_t write, uint64_t info, uint32_t locks)
{
	uint64_t v = 0, w1 = 0;
	if (locks == HG_LOCKS_UNKNOWN || __atomic_load_n(&cell[1], __ATOMIC_RELAXED) != 0)
		return 0;
	uint64_t next = (uint64_t)(write ? SH_EXCL_WRITE : SH_EXCL_READ) << SH_STATE_SHIFT | epoch | tm;
	uint64_t outer = hg_move_begin(hg_moving(t), cell);
	int made = __atomic_compare_exchange_n(cell, &v, next, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
	if (made) {
		if (locks != 0)
			made = __atomic_compare_exchange_n(&cell[1], &w1, (uint64_t)locks, 0, __ATOMIC_RELAXED,
							   __ATOMIC_RELAXED);
		cell[2] = hg_access_word(info, epoch >> SH_TID_SHIFT, m, locks);
	}
	hg_move_end(hg_moving(t), outer);
	return made;
}

/* The hand-off tables' keys, and the release stamps (hgrt.h,
 * hg_publish_handoff). */
uintptr_t hg_handoff_keys[3];
uint32_t hg_handoff_bits[3];

void hg_publish_handoff(int table, uintptr_t keys, uint32_t bits)
{
	if (table < 0 || table > 2)
		return;
	hg_handoff_bits[table] = bits;
	__atomic_store_n(&hg_handoff_keys[table], keys, __ATOMIC_RELEASE);
}

/* hg_handoff_news: may the published writes (runtime/detect's wrSegs)
 * hold, under key, a segment the thread (self, its clock row known) does
 * not know yet? segTable.news over the same memory: an entry of the key
 * whose epoch the row does not cover, or, when the key has no entry, an
 * overflow segment the thread was not told it knows. A way being
 * rewritten counts as news. *found says whether the key has an entry
 * (hg_handoff_seen). */
HG_INLINE static inline int hg_handoff_seen(struct hg_thread *t, uint64_t key, uint64_t self, const uint64_t *known, int *found)
{
	uintptr_t base = __atomic_load_n(&hg_handoff_keys[0], __ATOMIC_ACQUIRE);
	*found = 0;
	if (!base)
		return 0; /* nothing published yet */
	if (base == HG_HANDOFF_IN_HEAP)
		return 1;
	uint64_t *ways = &hg_wslot_of(base, key)->way[0][0];
	for (int w = 0; w < 8; w++) {
		if (__atomic_load_n(&ways[2 * w], __ATOMIC_ACQUIRE) != key)
			continue;
		uint64_t e = __atomic_load_n(&ways[2 * w + 1], __ATOMIC_ACQUIRE);
		if (__atomic_load_n(&ways[2 * w], __ATOMIC_ACQUIRE) != key)
			return 1;
		*found = 1;
		uint64_t tid = e >> 48, clock = e & ((1ull << 48) - 1);
		if (tid != self && known[tid] < clock)
			return 1;
	}
	if (!*found) {
		uint64_t over = __atomic_load_n((uint64_t *)base, __ATOMIC_ACQUIRE);
		if (over && t->over_known[0] != over)
			return 1;
	}
	return 0;
}

HG_INLINE static inline int hg_handoff_news(struct hg_thread *t, uint64_t key, uint64_t self, const uint64_t *known)
{
	int found;
	return hg_handoff_seen(t, key, self, known, &found);
}

/* hg_reads_known: t knows the segment published for each read its
 * region recorded from index `from` on (hg_handoff_news: none is news,
 * nor the overflow for a read without one), so that joining them
 * (runtime/detect, wrSegs.joinInto) would change nothing; *found says
 * whether any of them has one. */
HG_PLAIN int hg_reads_known(struct hg_thread *t, int from, int *found)
{
	const uint64_t *known = __atomic_load_n(&hg_clocks, __ATOMIC_ACQUIRE);
	*found = 0;
	if (!known || t->tid < 0)
		return 0;
	uint64_t self = (uint64_t)t->tid;
	known += self * HG_MAX_THREADS;
	for (int i = from; i < t->nrec_r; i++) {
		int seen;
		if (hg_handoff_seen(t, hg_wkey(t->rec_r[i]), self, known, &seen))
			return 0;
		*found |= seen;
	}
	return 1;
}

/* hg_rlway_news: does the way hold, for a writer under mutex m, a region
 * the thread does not know yet that read a granule of [lo, hi)? */
HG_INLINE static inline int hg_rlway_news(const struct hg_rlway *w, uint64_t m, uint64_t lo, uint64_t hi, uint64_t self, const uint64_t *known)
{
	uint64_t s = __atomic_load_n(&w->seq, __ATOMIC_ACQUIRE);
	if (s & 1)
		return 1;
	if (__atomic_load_n(&w->mutex, __ATOMIC_ACQUIRE) != m)
		return 0;
	uint64_t e = __atomic_load_n(&w->epoch, __ATOMIC_ACQUIRE), tid = e >> 48, clock = e & ((1ull << 48) - 1);
	if (tid == self || known[tid] >= clock)
		return __atomic_load_n(&w->seq, __ATOMIC_ACQUIRE) != s;
	uint64_t n = __atomic_load_n(&w->n, __ATOMIC_ACQUIRE);
	if (n > HG_RL_KEYS)
		return 1; /* HG_RL_ALL: every variable */
	for (uint64_t j = 0; j < n; j++) {
		uint64_t g = __atomic_load_n(&w->keys[j], __ATOMIC_RELAXED) - 1;
		if (g >= lo && g < hi)
			return 1;
	}
	return __atomic_load_n(&w->seq, __ATOMIC_ACQUIRE) != s;
}

/* hg_readers_news: may the reader log hold, for a write of [addr,
 * addr+size) inside a region, a region of another thread under a mutex
 * this thread holds that read what it writes and that the thread does not
 * know yet? runtime/detect's readLog.news for each mutex held (in either
 * mode: the Go side asks only for those held in write mode), and the
 * log's overflow, which every writer looks at. */
HG_INLINE static inline int hg_readers_news(struct hg_thread *t, uint64_t addr, uint64_t size, uint64_t self, const uint64_t *known)
{
	uintptr_t base = __atomic_load_n(&hg_handoff_keys[1], __ATOMIC_ACQUIRE);
	if (!base)
		return 0; /* nothing published yet */
	if (base == HG_HANDOFF_IN_HEAP)
		return 1;
	uint64_t over = __atomic_load_n((uint64_t *)base, __ATOMIC_ACQUIRE);
	if ((over && t->over_known[1] != over) || t->held_over)
		return 1;
	uint32_t bits = hg_handoff_bits[1];
	uint64_t lo = addr & ~(SH_GRANULE - 1), hi = addr + size;
	for (int h = 0; h < t->nheld_tab; h++) {
		uint64_t m = t->held_m[h];
		uint64_t i = hg_hash(m >> 2, bits);
		const struct hg_rlway *w = (const struct hg_rlway *)(base + 64) + i * HG_RL_WAYS;
		for (int j = 0; j < HG_RL_WAYS; j++)
			if (hg_rlway_news(&w[j], m, lo, hi, self, known))
				return 1;
	}
	return 0;
}

HG_SLOW static int hg_handoff_join(struct hg_thread *t, uint64_t addr);
HG_SLOW static int hg_readers_join(struct hg_thread *t, uint64_t addr, uint64_t size);

/* hg_handoff_quiet: an access inside a lock-protected region for which
 * the Go side's hand-off look-ups (runtime/detect/handoff.go: a read in
 * the published writes by its address, a write in the reader log of the
 * mutexes held) would find nothing the thread does not know. Then
 * the access needs them not, and the fast path may settle it as one made
 * outside a region. */
HG_SLOW static int hg_handoff_quiet(struct hg_thread *t, uint64_t addr, uint64_t size, uint32_t flags)
{
	const uint64_t *known = __atomic_load_n(&hg_clocks, __ATOMIC_ACQUIRE);
	if (!known || t->tid < 0)
		return 0;
	uint64_t self = (uint64_t)t->tid;
	known += self * HG_MAX_THREADS;
	if ((flags & HG_READ) && hg_handoff_news(t, hg_wkey(addr), self, known)) {
		hg_handoff_join(t, addr); /* the access then goes the fast path again (rejoined) */
		return 0;
	}
	if ((flags & HG_WRITE) && hg_readers_news(t, addr, size, self, known)) {
		hg_readers_join(t, addr, size); /* the access then goes the fast path again (rejoined) */
		return 0;
	}
	return 1;
}

/* hg_take_over: an access to a location exclusive to another thread u
 * (word 0 v, word 1 w1) whose segment happens before the access, as the
 * thread's clock row shows (hg_clocks, mirrored by the Go side): a lock
 * hand-off, a join, a queue that passed a block on. Both machines make the
 * location the thread's, with the thread's locks as E_d (a new segment).
 * runtime/detect's step does the rest the same way: the past owner's
 * access in word 3, with its clock in word 1's upper half, must be ordered
 * before this access too (pastConflict) or the Go side decides; the
 * history moves the latest access to word 3 unless it is this thread's
 * own and stays (remember), and word 1's upper half takes u's clock when
 * word 3 becomes u's access (pastClock). Word 0 changes by
 * compare-and-swap, as always; word 1 after it, by compare-and-swap from
 * the value read, so that a Go-side step changing the cell meanwhile
 * keeps what it wrote. */
HG_SLOW static int hg_take_over(uint64_t *cell, uint64_t v, uint64_t w1, uint64_t epoch, uint64_t m, uint32_t write,
				 uint64_t info, uint32_t locks)
{
	uint64_t *known = __atomic_load_n(&hg_clocks, __ATOMIC_ACQUIRE);
	if (!known)
		return 0;
	uint64_t self = (epoch >> SH_TID_SHIFT) & HG_CELL_TID_MASK;
	known += self * HG_MAX_THREADS;
	uint64_t u = (v >> SH_TID_SHIFT) & HG_CELL_TID_MASK, clock = v & ((1ull << SH_TOUCHED_SHIFT) - 1);
	if (known[u] < clock)
		return 0; /* parallel: shared, or a race */
	uint64_t c3 = cell[3], past = w1 >> 32;
	if (c3 && past && hg_access_tid(c3) != self && known[hg_access_tid(c3)] < past)
		return 0; /* the past owner's access may race with this one */
	uint64_t latest = cell[2], other = c3, npast = past;
	if (latest && (hg_access_tid(latest) != self ||
		       (((latest >> SH_ACCESS_FLAG_SHIFT) & (HG_WRITE | HG_POST)) && !write))) {
		other = latest;
		npast = hg_access_tid(latest) == u && clock < (1ull << 32) ? clock : 0;
	}
	uint64_t next = (uint64_t)(write ? SH_EXCL_WRITE : SH_EXCL_READ) << SH_STATE_SHIFT | epoch | (v & SH_TOUCHED_MASK) | m;
	if (!__atomic_compare_exchange_n(cell, &v, next, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return 0;
	__atomic_compare_exchange_n(&cell[1], &w1, (uint64_t)locks | npast << 32, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	cell[3] = other;
	cell[2] = hg_access_word(info, self, m, locks);
	return 1;
}

/* hg_owner_locks puts E_d e into word 1 (its lower half), read as w1:
 * by compare-and-swap, so that a Go-side step of another thread changing
 * the cell at that moment keeps what it wrote (the access then goes to the
 * Go side, after that step). */
HG_SLOW static int hg_owner_locks(uint64_t *cell, uint64_t w1, uint32_t e)
{
	return __atomic_compare_exchange_n(&cell[1], &w1, (w1 & ~0xffffffffull) | e, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

HG_SLOW static int hg_split_granule(struct hg_thread *t, uint64_t *cell, uint64_t epoch, uint64_t m, uint32_t write,
				     uint64_t info, uint32_t locks, uint64_t addr, uint64_t size);

/* hg_other_cell settles the granule cases that involve more than the
 * thread's own data (hg_granule): a first access, a split granule, a
 * location in Race, a shared location, another thread's. Out of line, so
 * that the common case in hg_access keeps few registers (each costs a
 * push and a pop on every access). Inside a lock-protected region, all
 * but the first access need the hand-off tables to hold nothing new for
 * the access (quiet: the region's access in hg_handoff_quiet, asked once
 * per granule). tm: as hg_new_cell's. */
HG_SLOW static int hg_other_cell(struct hg_thread *t, uint64_t *cell, uint64_t v, uint64_t w1, uint64_t epoch, uint64_t m,
				  uint64_t tm, uint32_t write, uint64_t info, uint32_t locks, uint64_t addr, uint64_t size)
{
	if (v == 0) {
		/* inside a region, the Go side looks the access up in the
		 * hand-off tables whatever the cell's state: a reused block's
		 * granule may have published writes still */
		if (t->recording && !hg_handoff_quiet(t, addr, size, HG_INFO_FLAGS(info)))
			return 0;
		return hg_new_cell(t, cell, epoch, m, tm, write, info, locks);
	}
	if (v >> SH_STATE_SHIFT == SH_SPLIT)
		return hg_split_granule(t, cell, epoch, m, write, info, locks, addr, size);
	if ((m & ~v) != 0)
		return 0; /* bytes the granule has not seen: it may split */
	if (t->recording && !hg_handoff_quiet(t, addr, size, HG_INFO_FLAGS(info)))
		return 0;
	uint64_t vt = v & ~SH_TOUCHED_MASK, state = vt >> SH_STATE_SHIFT;
	if (state == SH_RACE)
		return 1; /* Race absorbs: the Go side would change nothing and report nothing */
	if (state != SH_EXCL_READ && state != SH_EXCL_WRITE) {
		int r = hg_shared_unchanged(t, vt, w1, epoch, write, locks);
		if (r != 2)
			return r;
		uint64_t outer = hg_move_begin(hg_moving(t), cell); /* word 0 names t before the history follows */
		r = hg_shared_write(cell, v, epoch, m, info, locks);
		hg_move_end(hg_moving(t), outer);
		return r;
	}
	/* another thread's: a race, a shared location, or this thread's now
	 * if the owner's access happens before */
	if (locks == HG_LOCKS_UNKNOWN)
		return 0;
	uint64_t outer = hg_move_begin(hg_moving(t), cell); /* word 0 names t before words 1 to 3 follow */
	int taken = hg_take_over(cell, v, w1, epoch, m, write, info, locks);
	hg_move_end(hg_moving(t), outer);
	return taken;
}

/* hg_granule settles one granule's cell (hg_handled), or a side cell of
 * a split granule's (hg_split_granule; tm as hg_new_cell's): the
 * thread's own data here, the rest in hg_other_cell. */
__attribute__((target("general-regs-only"), always_inline)) static inline int
hg_granule(struct hg_thread *t, uint64_t *cell, uint64_t epoch, uint64_t m, uint64_t tm, uint32_t write, uint64_t info,
	   uint32_t locks, uint64_t addr, uint64_t size)
{
	uint64_t w = (uint64_t)SH_EXCL_WRITE << SH_STATE_SHIFT | epoch;
	uint64_t v = __atomic_load_n(cell, __ATOMIC_RELAXED);
	uint64_t w1 = __atomic_load_n(&cell[1], __ATOMIC_RELAXED);
	uint32_t owner = (uint32_t)w1; /* E_d, or C_d in the shared states */
	if (v == (w | m) || v == (w | SH_TOUCHED_MASK)) {
		/* the common case: nothing changes */
		if (owner != locks && owner != 0 && !hg_lockset_within(owner, locks))
			return 0;
		return hg_unchanged_own(t, cell, v, epoch, m, tm, info, locks);
	}
	uint64_t vt = v & ~SH_TOUCHED_MASK, state = vt >> SH_STATE_SHIFT;
	if ((state != SH_EXCL_READ && state != SH_EXCL_WRITE) || (((vt ^ epoch) >> SH_TID_SHIFT) & HG_CELL_TID_MASK) != 0)
		return hg_other_cell(t, cell, v, w1, epoch, m, tm, write, info, locks, addr, size);
	int same = (vt & ((1ull << SH_STATE_SHIFT) - 1)) == epoch;
	if (locks == HG_LOCKS_UNKNOWN)
		return 0; /* the history would not know the locks: the Go side */
	/* The owner's lockset E_d (msm, choice 13): the access's locks in a
	 * new segment, else E_d ∩ L_t, which the fast path knows when one of
	 * the two is empty, they are equal, E_d is AnyLocks, or one holds
	 * the other (hg_lockset_within). */
	uint32_t e = owner;
	if (!same)
		e = locks;
	else if (owner != locks && owner != 0) {
		if (owner == SH_ANY_LOCKS || locks == 0 || hg_lockset_within(locks, owner))
			e = locks;
		else if (!hg_lockset_within(owner, locks))
			return 0; /* an intersection: the Go side */
	}
	/* Exclusive to this thread: move to this segment. Word 0 by
	 * compare-and-swap even when it stays as it is and only E_d changes:
	 * v and w1 were read one after the other, and a split of the granule
	 * between the two (word 0 taken, then word 1 the side cells' offset:
	 * shadow.Memory.Split) gave a w1 that the lockset's store turned into
	 * a lockset, the side cells lost (annotations' handoff-bare missed its
	 * race about once in a hundred runs on a loaded machine). The
	 * compare-and-swap fails then; made inside the move, it also has the
	 * split wait for the move's end before it reads word 1. */
	uint64_t next = hg_own_next(v, epoch, m, write);
	if (next == v && e == owner)
		return hg_unchanged_own(t, cell, v, epoch, m, tm, info, locks);
	uint64_t outer = hg_move_begin(hg_moving(t), cell);
	int moved = __atomic_compare_exchange_n(cell, &v, next, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED) &&
		    (e == owner || hg_owner_locks(cell, w1, e));
	if (moved)
		hg_history(cell, info, epoch >> SH_TID_SHIFT, m, locks, vt, same);
	hg_move_end(hg_moving(t), outer);
	return moved;
}

/* hg_side_cells is the side cells of a split granule whose word 1 is w1
 * (shadow/split.go: SH_GRANULE cells of SH_CELL_WORDS words, at w1 in the
 * reservation the Go side published), or NULL when the fast path cannot
 * read them. */
__attribute__((target("general-regs-only"))) static inline uint64_t *hg_side_cells(uint64_t w1)
{
	uintptr_t base = __atomic_load_n(&hg_split_base, __ATOMIC_ACQUIRE);
	if (!base || w1 == 0 || w1 >= SH_SPLIT_RESERVE || w1 % (SH_GRANULE * SH_CELL_BYTES) != 0)
		return NULL;
	return (uint64_t *)(base + w1);
}

/* hg_split_granule settles an access to the bytes m (in place) of a split
 * granule byte by byte, as the Go side steps its side cells
 * (runtime/detect, granule): each is a location of its own, all of whose
 * bytes count as touched, and whose history takes the access's word for
 * the granule (m). Word 1 is read after word 0 said split (the Go side
 * writes it before): a granule split by two threads using neighbouring
 * 4-byte variables stays in C. */
HG_SLOW static int hg_split_granule(struct hg_thread *t, uint64_t *cell, uint64_t epoch, uint64_t m, uint32_t write,
				     uint64_t info, uint32_t locks, uint64_t addr, uint64_t size)
{
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	uint64_t *side = hg_side_cells(__atomic_load_n(&cell[1], __ATOMIC_ACQUIRE));
	if (!side)
		return 0;
	for (uint64_t bytes = (m >> SH_TOUCHED_SHIFT) & SH_GRANULE_BYTES; bytes; bytes &= bytes - 1) {
		uint64_t *sc = side + (uint64_t)__builtin_ctzll(bytes) * SH_CELL_WORDS;
		if (!hg_granule(t, sc, epoch, m, SH_TOUCHED_MASK, write, info, locks, addr, size))
			return 0;
	}
	return 1;
}

/* hg_thread_locks is the lockset id that guards an access of t (detect's
 * thread.accessOf: write-mode locks for a write), as far as the fast path
 * knows it: none when the thread holds no lock; its lock view (lockview.c)
 * when that is known; else HG_LOCKS_UNKNOWN, which matches no cell. */
__attribute__((target("general-regs-only"), always_inline)) static inline uint32_t hg_thread_locks(struct hg_thread *t,
												   uint32_t write)
{
	if (t->nheld == 0)
		return 0;
	if (!t->locks_known)
		return HG_LOCKS_UNKNOWN;
	return write ? (uint32_t)(t->lk >> 32) : (uint32_t)t->lk;
}

/* hg_handled applies the fast path to an access of up to 32 bytes within
 * one chunk of shadow, granule by granule, each with the mask of the bytes
 * it covers (an unaligned word touches two granules in part); anything
 * else goes to the Go side. A read-modify-write is a write, as the state
 * machines take it. The state is word 0 (shadow/cell.go, hgabi.h): state
 * (from SH_STATE_SHIFT) | tid (from SH_TID_SHIFT) | touched mask
 * (SH_TOUCHED_MASK) | clock, and epoch is tid << SH_TID_SHIFT | clock. A
 * granule settled before a later one fails stays settled: the Go side
 * then finds it unchanged. */
__attribute__((target("general-regs-only"), always_inline)) static inline int hg_handled(struct hg_thread *t, uint64_t addr,
										     uint64_t size, uint32_t flags, uint64_t info)
{
	uint32_t off = addr & (SH_GRANULE - 1);
	if (addr >= SH_MAX_ADDR - 32 || size == 0)
		return 0;
	uint64_t *cell = hg_cell(addr);
	if (!cell)
		return 0;
	uint64_t epoch = hg_tstate[t->tid].epoch;
	uint32_t write = flags & HG_WRITE;
	uint32_t locks = hg_thread_locks(t, write);
	if (off + size <= SH_GRANULE)
		return hg_granule(t, cell, epoch, hg_first_bytes(off, size) << SH_TOUCHED_SHIFT,
				  hg_first_bytes(off, size) << SH_TOUCHED_SHIFT, write, info, locks, addr, size);
	if (size > 32 || (addr >> SH_CHUNK_SHIFT) != ((addr + size - 1) >> SH_CHUNK_SHIFT))
		return 0;
	uint64_t left = off + size; /* bytes from the first granule's start */
	uint64_t m = hg_first_bytes(off, size);
	for (;;) {
		if (!hg_granule(t, cell, epoch, m << SH_TOUCHED_SHIFT, m << SH_TOUCHED_SHIFT, write, info, locks, addr, size))
			return 0;
		if (left <= SH_GRANULE)
			return 1;
		left -= SH_GRANULE;
		cell += SH_CELL_WORDS;
		m = hg_next_bytes(left);
	}
}

/* hg_is_sync: a store of size bytes at addr may write a synchronisation
 * variable (bytes that locked instructions operate on: runtime/detect,
 * markSync): its granule is one, or the side cell of one of the bytes in
 * a split granule is (when the fast path cannot read side cells, any
 * split granule may be). A plain store to one is a release (x86's
 * release store), which must reach the Go side before another thread can
 * see the stored value, as an atomic's does. */
__attribute__((target("general-regs-only"))) static inline int hg_is_sync(uint64_t addr, uint64_t size)
{
	uint64_t *cell = hg_cell(addr);
	uint64_t state = cell ? __atomic_load_n(cell, __ATOMIC_ACQUIRE) >> SH_STATE_SHIFT : SH_NEW;
	if (state != SH_SPLIT)
		return state == SH_SYNC;
	uint64_t *side = hg_side_cells(__atomic_load_n(&cell[1], __ATOMIC_ACQUIRE));
	if (!side)
		return 1;
	uint64_t off = addr & (SH_GRANULE - 1), end = off + size < SH_GRANULE ? off + size : SH_GRANULE;
	for (uint64_t b = off; b < end; b++)
		if (__atomic_load_n(&side[b * SH_CELL_WORDS], __ATOMIC_RELAXED) >> SH_STATE_SHIFT == SH_SYNC)
			return 1;
	return 0;
}

/* hg_deferred counts, for stats=1, why an access went to the Go side: the
 * state of its cell at that moment (where the time goes, issue 12). */
HG_SLOW static void hg_deferred(struct hg_thread *t, uint64_t addr, uint64_t info, uint64_t len)
{
	int kind = HG_DEFER_OTHER_EXCL;
	uint64_t *cell = hg_cell(addr);
	if (HG_INFO_FLAGS(info) & (HG_ATOMIC | HG_HOOK | HG_SPIN)) {
		kind = HG_DEFER_SYNC_EVENT;
	} else if (len) {
		kind = HG_DEFER_RANGE;
	} else if (!cell) {
		kind = HG_DEFER_UNMAPPED;
	} else {
		uint64_t w0 = __atomic_load_n(cell, __ATOMIC_RELAXED);
		switch (w0 >> SH_STATE_SHIFT) {
		case SH_NEW:
			kind = HG_DEFER_NEW;
			break;
		case SH_EXCL_READ:
		case SH_EXCL_WRITE:
			if (((w0 >> SH_TID_SHIFT) & HG_CELL_TID_MASK) == (uint64_t)t->tid)
				kind = hg_thread_locks(t, HG_INFO_FLAGS(info) & HG_WRITE) == HG_LOCKS_UNKNOWN
					       ? HG_DEFER_LOCKS_UNKNOWN
					       : HG_DEFER_OWN;
			break;
		case SH_SYNC:
			kind = HG_DEFER_SYNC;
			break;
		case SH_RACE:
			kind = HG_DEFER_RACE;
			break;
		case SH_SPLIT:
			kind = HG_DEFER_SPLIT;
			break;
		default:
			kind = HG_DEFER_SHARED;
		}
	}
	hg_add(&t->deferred[kind], 1, t);
}

HG_SLOW static int hg_release_c(struct hg_thread *t, uint64_t addr, uint64_t size);
HG_INLINE static inline void hg_tick_event(struct hg_thread *t, uint64_t addr, uint64_t info, uint64_t len);
HG_INLINE static inline void hg_released(struct hg_thread *t, uint64_t addr);

__attribute__((target("general-regs-only"))) static inline void hg_push(struct hg_thread *t, uint64_t addr,
									 uint64_t info, uint64_t len)
{
	if (__builtin_expect(t->sig_depth > 0, 0)) {
		hg_sig_access(t, addr, info, len); /* inside a signal handler */
		return;
	}
	if (!hg_detect || t->in_rt)
		return;
	uint32_t flags = HG_INFO_FLAGS(info);
	if (!(flags & (HG_ATOMIC | HG_HOOK))) {
		if (__builtin_expect(hg_spin_used, 0) && (flags & HG_WRITE) && !(flags & HG_READ) &&
		    hg_spin_is(addr, len ? len : HG_INFO_SIZE(info))) {
			/* the counterpart write of a spin variable reached through a
			 * pointer (loops.c): a release, not an access */
			info |= HG_INFO(0, 0, HG_ATOMIC | HG_SPIN);
		} else if (t->tid >= 0 && hg_handled(t, addr, len ? len : HG_INFO_SIZE(info), flags, info)) {
			return;
		}
	}
	if ((flags & (HG_WRITE | HG_READ | HG_ATOMIC | HG_HOOK | HG_SPIN)) == HG_WRITE && !len &&
	    hg_release_c(t, addr, HG_INFO_SIZE(info))) {
		hg_released(t, addr); /* a store to a synchronisation variable */
		return;
	}
	if (__builtin_expect(hg_opts.stats, 0))
		hg_deferred(t, addr, info, len);
	if (t->n >= HG_EVENTS) /* a wrapper that may not flush left it full */
		hg_flush_saving(t);
	struct hg_event *e = &t->buf[t->n];
	e->addr = addr;
	e->info = info;
	e->len = len;
	if (t->access_sp && !len && !(HG_INFO_FLAGS(info) & (HG_ATOMIC | HG_HOOK | HG_SPIN)))
		e->len = HG_EVENT_LEN_SP | t->access_sp; /* for the report's stack (events.go) */
	t->access_sp = 0;
	t->go_pending = 1; /* the Go side may join and tick for it (regionpub.c) */
	__asm__ volatile("" ::: "memory"); /* complete before it counts (see hg_event) */
	t->n++;
	if (t->n == HG_EVENTS || (HG_INFO_FLAGS(info) & HG_ATOMIC) ||
	    ((HG_INFO_FLAGS(info) & (HG_WRITE | HG_READ)) == HG_WRITE && !len && hg_is_sync(addr, HG_INFO_SIZE(info))))
		hg_flush_saving(t);
}

/* hg_hook handles the rewriter's loop hooks (patch/hooks.go). A wait
 * mark is noted for the next condition wait (wrappers.c); a wait-loop exit
 * goes to the Go side in order with the thread's accesses, since it acts on
 * the reads recorded since the last lock. */
/* hg_loop_exit_c settles a wait loop's exit (runtime/detect, loopExit)
 * in C when the Go side's would only move t to its next segment: t is
 * inside a region, with lsd=wr and hand-offs, not in a forked child
 * whose detector is another process; no marked wait of the loop completed
 * since its last exit (the loop's condition variable would then come
 * from the Go side's record of it); nothing waits in the buffer for the
 * Go side; a read the region recorded has a published segment (no
 * fallback to the condition variable's TS_cv), and t knows the segment
 * of every one (the reads joined them when they were made:
 * hg_handoff_join). The region's end then searches the reads recorded
 * after this (waited_c, hook_joined), in C or, with the unlock event's
 * HG_LOCK_WAITED_C, on the Go side. A queue's consumer left its wait
 * loop in every region and called into Go for it (bench/pipeline.c). */
static __attribute__((target("general-regs-only"))) int hg_loop_exit_c(struct hg_thread *t)
{
	int found;
	if (!t->recording || hg_opts.lsd != 2 || !hg_opts.handoff || hg_remote_on() || t->loop_waited || t->go_pending ||
	    t->sig_depth || t->sig_n || t->sig_acq || !hg_reads_known(t, 0, &found) || !found || !hg_begin_segment(t))
		return 0;
	hg_tick_event(t, t->region_mutex, HG_INFO(0, 0, HG_ATOMIC | HG_POST), HG_ACQUIRE_KNOWN);
	t->waited_c = 1;
	t->hook_joined = (uint8_t)t->nrec_r;
	return 1;
}

HG_SLOW static void hg_hook(struct hg_thread *t, uint64_t addr, uint64_t info)
{
	if (!hg_detect || t->in_rt || t->tid < 0 || hg_opts.lsd == 0)
		return;
	uint32_t kind = HG_INFO_SIZE(info);
	if ((kind & 0xff) == HG_HOOK_WAIT) {
		t->wait_mark = 1;
		return;
	}
	if ((kind & 0xff) == HG_HOOK_LOCK) {
		hg_cvm_note(addr);
		return;
	}
	t->wait_mark = 0;
	if (t->recording)
		hg_cvm_note(t->region_mutex);
	if (hg_loop_exit_c(t))
		return;
	t->loop_waited = 0;
	t->waited = t->recording;
	if (kind & HG_HOOK_DEREF) {
		/* the pointer is loaded here; the pc field holds an addend */
		addr = hg_safe_load(addr);
		if (addr)
			addr += (int64_t)(int32_t)HG_INFO_PC(info);
	}
	hg_push(t, addr, info, 0);
}

/* hg_sync_slot is addr's slot of the release stamps (hgrt.h,
 * hg_publish_handoff [2]), NULL while the C side cannot read them: none
 * mapped yet, made in the Go heap, or a forked child, whose detector does
 * not write this process's stamps. */
HG_INLINE static inline struct hg_sync_stamp *hg_sync_slot(uint64_t addr)
{
	uintptr_t base = __atomic_load_n(&hg_handoff_keys[2], __ATOMIC_ACQUIRE);
	if (!base || base == HG_HANDOFF_IN_HEAP || hg_remote_on())
		return NULL;
	return (struct hg_sync_stamp *)(base + 64) + hg_hash(addr >> 2, hg_handoff_bits[2]);
}

/* hg_acquire_known: nothing was released on the word at addr since
 * thread t last acquired it (runtime/detect/sync.go): the object's slot
 * of the release stamps names it with the stamp t's record holds. A
 * release made before the atomic instruction whose acquire half this is
 * stamped the slot before that instruction, and was seen by it if it
 * happened before. */
HG_SLOW static int hg_acquire_known(struct hg_thread *t, uint64_t addr)
{
	struct hg_sync_stamp *s;
	if (t->acq[(addr >> 3) % HG_SYNC_KNOWN].obj != addr || !(s = hg_sync_slot(addr)))
		return 0;
	return __atomic_load_n(&s->key, __ATOMIC_ACQUIRE) == addr &&
	       __atomic_load_n(&s->stamp, __ATOMIC_RELAXED) == t->acq[(addr >> 3) % HG_SYNC_KNOWN].stamp;
}

/* hg_is_tick: e is the event of a segment the C side began
 * (hg_tick_event), with the count of those merged into it. */
HG_INLINE static inline int hg_is_tick(const struct hg_event *e)
{
	uint64_t kind = e->len & ((1ull << HG_TICKS_SHIFT) - 1);
	uint32_t flags = HG_INFO_FLAGS(e->info);
	return (kind == HG_ACQUIRE_KNOWN && flags == (HG_ATOMIC | HG_POST)) || (kind == HG_RELEASE_KNOWN && flags == HG_ATOMIC);
}

/* hg_tick_event buffers the event of a segment the C side began at an
 * instrumented instruction (HG_ACQUIRE_KNOWN, HG_RELEASE_KNOWN): a full
 * buffer goes to Go first with the program's vector state saved
 * (hg_flush_saving), which hg_event's flush, made for the wrappers'
 * calls, does not keep. One that follows another such event, with no
 * event between, is merged into it (counted from HG_TICKS_SHIFT): the
 * Go side's clock only ticks at each, and a run of atomic instructions
 * on words whose clocks the thread holds (reference counts, counters)
 * made an event of each half and a call into Go every 512 instructions.
 * Not while a signal handler's accesses or acquires wait for the flush,
 * at the positions of the events they follow. */
HG_INLINE static inline void hg_tick_event(struct hg_thread *t, uint64_t addr, uint64_t info, uint64_t len)
{
	if (t->n > 0 && !t->sig_n && !t->sig_acq) {
		struct hg_event *last = &t->buf[t->n - 1];
		if (hg_is_tick(last) && (last->len >> HG_TICKS_SHIFT) < 0xffffffffu) {
			last->len += 1ull << HG_TICKS_SHIFT;
			return;
		}
	}
	if (t->n >= HG_EVENTS)
		hg_flush_saving(t);
	hg_event(t, addr, info, len, 0);
}

/* hg_released follows a release on the word at addr that the C side
 * made (hg_release_known, hg_exchange_c, hg_release_c, each of which
 * checked the clock's room): t's next segment begins, and an event makes
 * the Go side's clock follow (HG_RELEASE_KNOWN). */
HG_INLINE static inline void hg_released(struct hg_thread *t, uint64_t addr)
{
	hg_begin_segment(t);
	hg_tick_event(t, addr, HG_INFO(0, 0, HG_ATOMIC), HG_RELEASE_KNOWN);
}

/* hg_acquired_known settles an acquire of the word at addr by thread t
 * that brings nothing new (hg_acquire_known): t's next segment begins
 * here, and the Go side's clock follows when it comes to the event, with
 * no call into Go now. One that brings something new goes to
 * hg_acquire_c. 0: the Go side acquires. */
HG_SLOW static int hg_acquire_c(struct hg_thread *t, uint64_t addr);

HG_SLOW static int hg_acquired_known(struct hg_thread *t, uint64_t addr)
{
	if (!hg_detect || t->in_rt || t->tid < 0)
		return 0;
	if (!hg_acquire_known(t, addr))
		return hg_acquire_c(t, addr); /* something new: taken in C if the slot holds it */
	if (!hg_begin_segment(t))
		return 0;
	hg_tick_event(t, addr, HG_INFO(0, 0, HG_ATOMIC | HG_POST), HG_ACQUIRE_KNOWN);
	return 1;
}

/* hg_release_known releases thread t's clock on the word at addr, of
 * size bytes, itself (1): t's clock is the word's but for t's own
 * component (its record's exact, from a release of its own, and no join
 * since), and nothing was released there since (the slot's stamp), so
 * the release only raises the word's component of t to t's epoch. That
 * goes into the slot for the Go side to fold in (pend); the stamp moves,
 * so that other threads' acquires of the word go to the Go side. The
 * word must be a synchronisation variable already, so that plain loads
 * of it stay acquires (runtime/detect, markSync), and the thread's
 * buffer may hold no access for the Go side (go_pending, a signal
 * handler's): a thread that acquires the release must not have its own
 * later accesses checked before the releaser's earlier ones (a false
 * report). 0: the Go side releases. The caller begins t's next
 * segment. */
HG_SLOW static int hg_release_known(struct hg_thread *t, uint64_t addr, uint64_t size)
{
	typeof(&t->acq[0]) a = &t->acq[(addr >> 3) % HG_SYNC_KNOWN];
	struct hg_sync_stamp *s;
	if (a->obj != addr || a->exact == 0 || t->joined_at > a->exact || t->go_pending || t->sig_n || t->sig_acq ||
	    !(s = hg_sync_slot(addr)) || !hg_is_sync(addr, size))
		return 0;
	uint64_t epoch = __atomic_load_n(&hg_tstate[t->tid].epoch, __ATOMIC_RELAXED);
	if (!hg_clock_room(epoch))
		return 0; /* hg_begin_segment would refuse */
	uint64_t q;
	if (!hg_seq_take(&s->seq, &q))
		return 0;
	int ok = __atomic_load_n(&s->key, __ATOMIC_RELAXED) == addr &&
		 __atomic_load_n(&s->stamp, __ATOMIC_RELAXED) == a->stamp;
	if (ok) {
		__atomic_store_n(&s->pend, (uint64_t)t->tid << 48 | (epoch & HG_CELL_CLOCK), __ATOMIC_RELAXED);
		__atomic_store_n(&s->stamp, a->stamp + 1, __ATOMIC_RELAXED);
		a->stamp++;
	}
	__atomic_store_n(&s->seq, q + 2, __ATOMIC_RELEASE);
	return ok;
}

/* What a join in C works with (hg_join_ready): the thread's row of
 * hg_clocks, one more than the highest thread id (hg_tid_hw), the
 * thread's own clock, and the object's clock, by thread id. */
struct hg_join {
	uint64_t *row;
	uint32_t hw;
	uint64_t own;
	uint64_t obj[HG_JOIN_TIDS];
};

/* hg_clock_ready: the C side may read thread t's clock whole, j set up
 * for it: t's row (which the Go side keeps equal to its clock but for
 * t's own component) and its epoch, when the clocks reach no further
 * than HG_JOIN_TIDS thread ids and t's clock has room for the segment
 * that follows (hg_clock_room). Not while a signal handler's accesses
 * or acquires wait for the Go side. */
HG_INLINE static inline int hg_clock_ready(struct hg_thread *t, struct hg_join *j)
{
	const uint64_t *rows = __atomic_load_n(&hg_clocks, __ATOMIC_ACQUIRE);
	uint32_t self = (uint32_t)t->tid;
	j->hw = __atomic_load_n(&hg_tid_hw, __ATOMIC_ACQUIRE);
	if (!hg_detect || t->in_rt || t->tid < 0 || t->sig_n || t->sig_acq || t->joined_at == ~0ull || !rows ||
	    j->hw > HG_JOIN_TIDS || self >= j->hw)
		return 0;
	j->row = (uint64_t *)rows + (uint64_t)self * HG_MAX_THREADS;
	j->own = __atomic_load_n(&hg_tstate[self].epoch, __ATOMIC_RELAXED) & HG_CELL_CLOCK;
	return hg_clock_room(j->own);
}

/* hg_join_ready: thread t may take another clock into its own in C
 * (hg_exchange_c, hg_acquire_c), j set up for it (hg_clock_ready). A
 * join is the Go side's to make when the buffer has no room for the
 * events of a join and its tick: no call into Go may be made while a
 * slot is held. (The hand-off ways the C side wrote for t keep their
 * clock in t's snapshot ring, which a join leaves as it is.) */
HG_INLINE static inline int hg_join_ready(struct hg_thread *t, struct hg_join *j)
{
	return t->n + HG_SYNC_SMALL + 2 <= HG_EVENTS && hg_clock_ready(t, j);
}

/* hg_slot_clock reads into j->obj the clock of the word at addr from its
 * slot s, which the caller holds or reads as a sequence lock's reader
 * (then it may read a writer's half-made state, which the caller drops):
 * the components when they are the clock whole (HG_SYNC_SMALL_VALID),
 * and pend. 0 when the slot names another word or does not hold the
 * clock. */
HG_INLINE static inline int hg_slot_clock(const struct hg_sync_stamp *s, uint64_t addr, struct hg_join *j)
{
	uint64_t meta = __atomic_load_n(&s->meta, __ATOMIC_RELAXED), n = meta & 0xff;
	if (__atomic_load_n(&s->key, __ATOMIC_RELAXED) != addr || !(meta & HG_SYNC_SMALL_VALID) || n > HG_SYNC_SMALL)
		return 0;
	for (uint32_t u = 0; u < j->hw; u++)
		j->obj[u] = 0;
	for (uint64_t i = 0; i <= n; i++) {
		uint64_t p = i < n ? __atomic_load_n(&s->small[i], __ATOMIC_RELAXED) : __atomic_load_n(&s->pend, __ATOMIC_RELAXED);
		uint64_t u = p >> 48;
		if (p == 0)
			continue;
		if (u >= j->hw)
			return 0;
		if (j->obj[u] < (p & HG_WAY_CLOCK))
			j->obj[u] = p & HG_WAY_CLOCK;
	}
	return 1;
}

/* hg_slot_release makes the word's clock (j->obj, read by hg_slot_clock
 * from slot s, which the caller holds) joined with t's its clock, in the
 * slot, for the Go side to fold in (HG_SYNC_SMALL_C), and stamps the
 * slot: syncClocks.release. 0, with the slot unchanged, when the join has
 * more than HG_SYNC_SMALL components. */
HG_INLINE static inline int hg_slot_release(struct hg_sync_stamp *s, const struct hg_thread *t, const struct hg_join *j)
{
	uint64_t next[HG_SYNC_SMALL], m = 0;
	for (uint32_t u = 0; u < j->hw; u++) {
		uint64_t c = u == (uint32_t)t->tid ? j->own : __atomic_load_n(&j->row[u], __ATOMIC_RELAXED);
		if (c < j->obj[u])
			c = j->obj[u];
		if (c == 0)
			continue;
		if (m == HG_SYNC_SMALL || c > HG_WAY_CLOCK)
			return 0;
		next[m++] = (uint64_t)u << 48 | c;
	}
	for (uint64_t i = 0; i < m; i++)
		__atomic_store_n(&s->small[i], next[i], __ATOMIC_RELAXED);
	__atomic_store_n(&s->meta, m | HG_SYNC_SMALL_VALID | HG_SYNC_SMALL_C, __ATOMIC_RELAXED);
	__atomic_store_n(&s->pend, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&s->stamp, __atomic_load_n(&s->stamp, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
	return 1;
}

/* hg_take_in makes t's clock take in the object's (j->obj): each
 * component raised goes into t's row at once, for the fast path's later
 * decisions, and into the buffer for the Go side (HG_CLOCK_RAISE), which
 * raises its copy when it comes to the event, in order with the thread's
 * other events: accesses buffered before are checked with the clock
 * they were made under. What the Go side's join would tell the C side
 * (cRecord.KnowJoin) it sets itself. */
HG_INLINE static inline void hg_take_in(struct hg_thread *t, const struct hg_join *j)
{
	int raised = 0;
	for (uint32_t u = 0; u < j->hw; u++) {
		if (u == (uint32_t)t->tid || j->obj[u] <= j->row[u])
			continue;
		__atomic_store_n(&j->row[u], j->obj[u], __ATOMIC_RELAXED);
		hg_event(t, (uint64_t)u << 48 | j->obj[u], HG_INFO(0, 0, HG_ATOMIC | HG_POST), HG_CLOCK_RAISE, 0);
		raised = 1;
	}
	if (raised)
		t->joined_at = j->own;
}

/* hg_exchange_c makes a read-modify-write's release half, with its
 * acquire half, in C when the word's slot of the release stamps holds the
 * word's clock whole: runtime/detect's syncClocks.exchange, which was a
 * call into Go whenever another thread had released on the word since (a
 * reference count that threads share). t's clock takes in the word's
 * (hg_take_in), and the word's takes in t's (hg_slot_release): t then
 * holds the word's clock exactly. It declines (0: the Go side
 * exchanges) where a join in C must (hg_join_ready), and for a buffered
 * access, as hg_release_known does. The caller begins t's next
 * segment. */
HG_SLOW static int hg_exchange_c(struct hg_thread *t, uint64_t addr, uint64_t size)
{
	struct hg_join j;
	struct hg_sync_stamp *s;
	uint64_t q;
	if (t->go_pending || !hg_join_ready(t, &j) || !(s = hg_sync_slot(addr)) || !hg_is_sync(addr, size) ||
	    !hg_seq_take(&s->seq, &q))
		return 0;
	int ok = hg_slot_clock(s, addr, &j) && hg_slot_release(s, t, &j);
	uint64_t stamp = __atomic_load_n(&s->stamp, __ATOMIC_RELAXED);
	__atomic_store_n(&s->seq, q + 2, __ATOMIC_RELEASE);
	if (!ok)
		return 0;
	hg_take_in(t, &j);
	typeof(&t->acq[0]) a = &t->acq[(addr >> 3) % HG_SYNC_KNOWN];
	a->obj = addr, a->stamp = stamp, a->exact = j.own;
	return 1;
}

/* hg_release_c makes a release of t's clock on the word at addr in C
 * when the word's slot holds its clock whole (hg_slot_release): a plain
 * store of size bytes to a synchronisation variable (a spinlock's
 * unlock, a flag's release store), which must be one already, or (size
 * 0) the counterpart write of a spin variable; both went to the Go side
 * at once. A thread that held the word's clock before holds it exactly
 * after, as syncClocks.release tells it. It declines (0: the Go side
 * releases) for a buffered access, as hg_release_known does, and where
 * the C side cannot read t's clock (hg_clock_ready). The caller begins
 * t's next segment. */
HG_SLOW static int hg_release_c(struct hg_thread *t, uint64_t addr, uint64_t size)
{
	struct hg_join j;
	struct hg_sync_stamp *s;
	uint64_t q;
	if (t->go_pending || !hg_clock_ready(t, &j) || !(s = hg_sync_slot(addr)) || (size && !hg_is_sync(addr, size)) ||
	    !hg_seq_take(&s->seq, &q))
		return 0;
	uint64_t before = __atomic_load_n(&s->stamp, __ATOMIC_RELAXED);
	int ok = hg_slot_clock(s, addr, &j) && hg_slot_release(s, t, &j);
	__atomic_store_n(&s->seq, q + 2, __ATOMIC_RELEASE);
	typeof(&t->acq[0]) a = &t->acq[(addr >> 3) % HG_SYNC_KNOWN];
	if (ok && a->obj == addr && a->stamp == before)
		a->stamp = before + 1, a->exact = j.own;
	return ok;
}

/* hg_cv_release_c makes the release of a signal on condition variable
 * cv (runtime/detect, Detector.release) in C, as the counterpart write
 * of a spin variable's (hg_release_known, hg_release_c), and begins t's
 * next segment. 0: the Go side releases. A signal inside a region went
 * to the Go side with the region's hand-over, a call into Go per region
 * of a queue (bench/pipeline.c). */
HG_PLAIN int hg_cv_release_c(struct hg_thread *t, uint64_t cv)
{
	if (!hg_detect || t->in_rt || t->tid < 0 || t->sig_depth || !(hg_release_known(t, cv, 0) || hg_release_c(t, cv, 0)))
		return 0;
	hg_released(t, cv);
	return 1;
}

/* hg_acquire_c makes an acquire of the word at addr (an atomic's acquire
 * half, a spinning read's) in C when the word's slot holds its clock
 * whole: t's clock takes it in (hg_take_in), as syncClocks.joinInto,
 * and t's next segment begins, with an event for the Go side's tick
 * (HG_ACQUIRE_KNOWN). 0: the Go side acquires. */
HG_SLOW static int hg_acquire_c(struct hg_thread *t, uint64_t addr)
{
	struct hg_join j;
	struct hg_sync_stamp *s;
	if (!hg_join_ready(t, &j) || !(s = hg_sync_slot(addr)))
		return 0;
	/* read as a sequence lock's reader: the slot is not taken, so that
	 * threads that spin on the word keep out of its writers' way */
	uint64_t q = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
	if ((q & 1) || !hg_slot_clock(s, addr, &j))
		return 0;
	uint64_t stamp = __atomic_load_n(&s->stamp, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (__atomic_load_n(&s->seq, __ATOMIC_RELAXED) != q)
		return 0; /* a writer came in between */
	hg_take_in(t, &j);
	typeof(&t->acq[0]) a = &t->acq[(addr >> 3) % HG_SYNC_KNOWN];
	a->obj = addr, a->stamp = stamp, a->exact = 0;
	hg_begin_segment(t); /* checked by hg_join_ready */
	hg_tick_event(t, addr, HG_INFO(0, 0, HG_ATOMIC | HG_POST), HG_ACQUIRE_KNOWN);
	return 1;
}

/* hg_rejoin ends a join in C made for the access at addr inside a
 * region (hg_handoff_join, hg_readers_join): t's clock takes in j->obj,
 * t's next segment begins, with an event for the Go side's tick, and the
 * caller settles the access again in it (rejoined). */
HG_INLINE static inline void hg_rejoin(struct hg_thread *t, struct hg_join *j, uint64_t addr)
{
	hg_take_in(t, j);
	hg_begin_segment(t); /* checked by hg_join_ready */
	hg_tick_event(t, addr, HG_INFO(0, 0, HG_ATOMIC | HG_POST), HG_ACQUIRE_KNOWN);
	t->rejoined = 1;
}

/* hg_handoff_join makes in C the join that a read inside a
 * lock-protected region makes on the Go side when the published writes
 * hold, for its address, a segment of another thread that t's clock does
 * not cover, published under a mutex t holds (runtime/detect,
 * handoffRead): t's clock takes in the segment's clock snapshot and its
 * epoch (hg_take_in), and t's next segment begins, with an event for the
 * Go side's tick, as joinSeg and tick there. The slot is read as a
 * sequence lock's reader; the clock is the snapshot the slot's refs hold
 * for a way the Go side wrote, the entry of its thread's snapshot ring
 * for a way the C side wrote (hg_way_clock). A queue's consumer
 * made such a join at the first read of each region, a call into Go and
 * a tick there for each (bench/pipeline.c, bench/handoff.c).
 *
 * It declines (0: the Go side joins) where a join in C must
 * (hg_join_ready), inside a signal handler, for a segment published
 * under more mutexes than one, and when the news is the overflow's. On
 * success t->rejoined is set: the caller settles the access again, in
 * the segment that begins. */
HG_SLOW static int hg_handoff_join(struct hg_thread *t, uint64_t addr)
{
	struct hg_join j;
	if (!hg_opts.handoff || t->sig_depth || t->n + HG_JOIN_TIDS + 2 > HG_EVENTS || !hg_join_ready(t, &j))
		return 0;
	uintptr_t base = __atomic_load_n(&hg_handoff_keys[0], __ATOMIC_ACQUIRE);
	if (!base || base == HG_HANDOFF_IN_HEAP)
		return 0;
	uint64_t key = hg_wkey(addr), self = (uint64_t)t->tid, e = 0;
	const struct hg_wslot *s = hg_wslot_of(base, key);
	uint64_t q = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
	int w = -1;
	if (q & 1)
		return 0;
	/* the first way of key with news, as segTable.news takes it */
	for (int i = 0; i < 8 && w < 0; i++) {
		if (__atomic_load_n(&s->way[i][0], __ATOMIC_RELAXED) != key)
			continue;
		uint64_t ei = __atomic_load_n(&s->way[i][1], __ATOMIC_RELAXED), u = ei >> 48;
		if (u != self && (u >= j.hw || j.row[u] < (ei & HG_WAY_CLOCK)))
			w = i, e = ei;
	}
	uint64_t u = e >> 48, m = w >= 0 ? __atomic_load_n(&s->mutex[w], __ATOMIC_RELAXED) : 0;
	if (w < 0 || u >= j.hw || m == 0 || hg_held_find(t, m) < 0)
		return 0; /* the overflow's news, or a segment t's locks do not reach (wrSeg.heldBy) */
	uintptr_t refs = __atomic_load_n(&s->refs, __ATOMIC_RELAXED);
	if (!(__atomic_load_n(&s->cmade, __ATOMIC_RELAXED) & (1ull << w)) && refs) {
		/* segRefs: a word per way (its snapshot), then more (what few
		 * segments have: more mutexes; TestSegRefsLayout), which a way
		 * the C side wrote does not use (segTable.seg) */
		uintptr_t more = __atomic_load_n((uintptr_t *)(refs + HG_SEGREFS_MORE), __ATOMIC_RELAXED);
		if (more && __atomic_load_n((uintptr_t *)(more + 8 * (uint64_t)w), __ATOMIC_RELAXED))
			return 0;
	}
	/* the last check of seq there stands for everything read here */
	if (!hg_way_clock(s, w, u, e & HG_WAY_CLOCK, q, j.hw, j.obj))
		return 0;
	if (j.obj[u] < (e & HG_WAY_CLOCK))
		j.obj[u] = e & HG_WAY_CLOCK;
	hg_rejoin(t, &j, addr);
	return 1;
}

/* hg_rlway_clock reads into out[0..hw) the clock of way w of the reader
 * log (index i; its thread u, at clock c; the log's segments at refs) if
 * its segment names mutex m alone, as a reader of the way's seq that read
 * q before: the entry of u's snapshot ring for a way the C side wrote
 * (HG_RL_CMADE), else the snapshot its rlRef holds. 0 otherwise, or when
 * seq moved. */
HG_INLINE static inline int hg_rlway_clock(const struct hg_rlway *w, uint64_t i, uint64_t u, uint64_t c, uint64_t m,
					   uintptr_t refs, uint64_t q, uint64_t hw, uint64_t *out)
{
	if (__atomic_load_n(&w->flags, __ATOMIC_RELAXED) & HG_RL_CMADE)
		return hg_snap_at_seq(u, c, hw, out, &w->seq, q);
	const uint64_t *ref = (const uint64_t *)refs + i * HG_RLREF_WORDS;
	if (__atomic_load_n(&ref[1], __ATOMIC_RELAXED) != m || __atomic_load_n(&ref[2], __ATOMIC_RELAXED))
		return 0; /* other mutexes, or more (wrSeg.more) */
	return hg_vc_read_seq(&w->seq, q, __atomic_load_n(&ref[0], __ATOMIC_RELAXED), hw, out);
}

/* hg_readers_join makes in C the join that a write inside a
 * lock-protected region makes on the Go side when the reader log holds,
 * under the region's mutex, reads of what it writes that regions of
 * other threads made and t does not know of (runtime/detect,
 * handoffWrite): t's clock takes in each such way's clock and epoch
 * (hg_take_in), and t's next segment begins, with an event for the Go
 * side's tick, as hg_handoff_join does for a read. A queue's or a table's
 * writer made such a join in most of its regions, each a call into Go
 * (bench/locks.c: 200 thousand of its writes, 94 thousand calls).
 *
 * It declines (0: the Go side joins) where hg_handoff_join does, when
 * the thread holds more than the region's mutex or holds it in read
 * mode, for a way whose segment names other mutexes, and when the log's
 * overflow is news to t. On success t->rejoined is set. */
HG_SLOW static int hg_readers_join(struct hg_thread *t, uint64_t addr, uint64_t size)
{
	struct hg_join j;
	uint64_t m = t->region_mutex;
	if (!hg_opts.handoff || t->sig_depth || t->n + HG_JOIN_TIDS + 2 > HG_EVENTS || !t->recording ||
	    t->region_read || t->nheld != 1 || t->nheld_tab != 1 || t->held_over || t->held_m[0] != m ||
	    !hg_join_ready(t, &j))
		return 0;
	uintptr_t base = __atomic_load_n(&hg_handoff_keys[1], __ATOMIC_ACQUIRE);
	if (!base || base == HG_HANDOFF_IN_HEAP)
		return 0;
	const struct hg_over_head *head = (const struct hg_over_head *)base;
	uint64_t over = __atomic_load_n(&head->id, __ATOMIC_ACQUIRE);
	uintptr_t refs = __atomic_load_n(&head->refs, __ATOMIC_ACQUIRE);
	if ((over && t->over_known[1] != over) || !refs)
		return 0;
	uint64_t self = (uint64_t)t->tid, lo = addr & ~(SH_GRANULE - 1), hi = addr + size;
	uint64_t slot = hg_hash(m >> 2, hg_handoff_bits[1]) * HG_RL_WAYS, clock[HG_JOIN_TIDS];
	const struct hg_rlway *ways = (const struct hg_rlway *)(base + 64) + slot;
	int any = 0;
	for (uint32_t v = 0; v < j.hw; v++)
		j.obj[v] = 0;
	for (int i = 0; i < HG_RL_WAYS; i++) {
		const struct hg_rlway *w = &ways[i];
		uint64_t q = __atomic_load_n(&w->seq, __ATOMIC_ACQUIRE);
		if (q & 1)
			return 0;
		if (!hg_rlway_news(w, m, lo, hi, self, j.row))
			continue;
		uint64_t e = __atomic_load_n(&w->epoch, __ATOMIC_RELAXED), u = e >> 48, c = e & HG_WAY_CLOCK;
		if (u >= j.hw || u == self || !hg_rlway_clock(w, slot + (uint64_t)i, u, c, m, refs, q, j.hw, clock))
			return 0;
		if (clock[u] < c)
			clock[u] = c;
		for (uint32_t v = 0; v < j.hw; v++)
			if (j.obj[v] < clock[v])
				j.obj[v] = clock[v];
		any = 1;
	}
	if (!any)
		return 0;
	hg_rejoin(t, &j, addr);
	return 1;
}

/* hg_spin handles the accesses of spinning-read loops: the condition load
 * is an acquire after the load (its address noted as a spin variable), a
 * counterpart write a release before the store. HG_SPIN without
 * HG_ATOMIC marks a store that may be a counterpart write: a release
 * followed by a plain write. With spin=no they are all plain accesses. */
HG_SLOW static void hg_spin(struct hg_thread *t, uint64_t addr, uint64_t info)
{
	uint32_t flags = HG_INFO_FLAGS(info);
	if (!hg_opts.spin && !(flags & HG_ORDERED)) {
		/* spin=no: a plain access, recorded in a region like any other */
		if (flags & HG_POST)
			return;
		hg_add(&t->accesses, 1, t);
		if (t->recording)
			hg_record(t, addr, flags & ~HG_ATOMIC);
		hg_push(t, addr, info & ~HG_INFO(0, 0, HG_ATOMIC | HG_SPIN), 0);
		return;
	}
	if (!(flags & HG_POST))
		hg_add(&t->accesses, 1, t);
	if (!(flags & HG_ATOMIC)) {
		/* a store that may write a spin variable (an element of a global
		 * array of flags): a release, and a checked write all the same */
		if (t->recording)
			hg_record(t, addr, flags);
		hg_push(t, addr, info | HG_INFO(0, 0, HG_ATOMIC), 0);
		hg_push(t, addr, info & ~HG_INFO(0, 0, HG_SPIN), 0);
		return;
	}
	if (flags & HG_READ) {
		if (!(flags & HG_POST)) {
			t->last_atomic = addr;
			if (!(flags & (HG_ORDERED | HG_SPIN_STATIC)))
				hg_spin_note(addr); /* every store is watched from now on */
			return;
		}
		addr = t->last_atomic;
		if (hg_acquired_known(t, addr))
			return; /* a spin that found nothing new released on its word */
	} else if (flags & HG_POST) {
		return;
	} else if (hg_release_c(t, addr, 0)) {
		hg_released(t, addr); /* the counterpart write of a spin variable */
		return;
	}
	hg_push(t, addr, info, 0);
}

/* hg_record notes an access made inside a lock-protected region (hgrt.h
 * rec_r/rec_w): the first HG_REC distinct addresses of each kind, and
 * whether the region read more (rec_r_all). After that a read costs no
 * search of the record: a region that scans a table read everything
 * (bench/readmostly.c searched 32 entries in vain at half its reads,
 * 14% of its time). Before it, a read that rec_r_seen says is new costs
 * none either (readmostly.c: hg_record 6.6-10.3% of the samples -> 5.3-6.1%,
 * 3 runs each; the call itself is most of the rest). */
__attribute__((no_caller_saved_registers, target("general-regs-only"), noinline)) void
hg_record(struct hg_thread *t, uint64_t addr, uint32_t flags)
{
	if (flags & HG_WRITE) {
		t->wrote = 1;
		if (t->rec_writes_on) {
			int i = 0;
			while (i < t->nrec_w && t->rec_w[i] != addr)
				i++;
			if (i == t->nrec_w && i < HG_REC)
				t->rec_w[t->nrec_w++] = addr;
		}
	}
	if ((flags & HG_READ) && !t->rec_r_all) {
		uint64_t bit = 1ull << (addr * 0x9e3779b97f4a7c15ull >> 58);
		int i = t->nrec_r;
		if (t->rec_r_seen & bit) {
			i = 0;
			while (i < t->nrec_r && t->rec_r[i] != addr)
				i++;
			if (i < t->nrec_r)
				return;
		}
		t->rec_r_seen |= bit;
		if (i < HG_REC)
			t->rec_r[t->nrec_r++] = addr;
		else
			t->rec_r_all = 1;
	}
}

/* Every function in this file is compiled for general registers only
 * (HG_INLINE, HG_PLAIN, HG_SLOW, HG_FAST). This one was not, at first:
 * GCC 12 then compiled the functions after it with the wrong register
 * contract (hg_access_batch_c kept a pointer in r10 across a call to
 * hg_own_move, which clobbers it: segmentation faults in the verdict
 * corpus), as if the target change had carried hg_record's
 * no_caller_saved_registers over. */
HG_PLAIN void hg_record_reads_reset(struct hg_thread *t)
{
	t->nrec_r = t->rec_r_all = 0;
	t->rec_r_seen = 0;
}

/* hg_access_slow is everything but the common case: hooks, spinning-read
 * accesses, atomics, accesses the fast path cannot settle, the first
 * access of a thread. counted: hg_access counted the access already. */
HG_SLOW static void hg_access_slow(uint64_t addr, uint64_t info, int counted)
{
	struct hg_thread *t = hg_self;
	if (__builtin_expect(t == NULL, 0))
		t = hg_register();
	if ((HG_INFO_FLAGS(info) & HG_HOOK) &&
	    ((HG_INFO_SIZE(info) & 0xff) == HG_HOOK_ANNOTATE || (HG_INFO_SIZE(info) & 0xff) == HG_HOOK_REQUEST)) {
		hg_annotate_hook(t, addr, info); /* not an event: never kept for a flush */
		return;
	}
	if (__builtin_expect(t->sig_depth > 0, 0)) { /* inside a signal handler */
		if (!counted)
			hg_add(&t->accesses, 1, t);
		hg_sig_access(t, addr, info, 0);
		return;
	}
	if (HG_INFO_FLAGS(info) & (HG_HOOK | HG_SPIN)) {
		if (HG_INFO_FLAGS(info) & HG_HOOK)
			hg_hook(t, addr, info);
		else
			hg_spin(t, addr, info);
		return;
	}
	if (HG_INFO_FLAGS(info) & HG_ATOMIC) {
		if (HG_INFO_FLAGS(info) & HG_POST)
			addr = t->last_atomic; /* the registers may have changed */
		else
			t->last_atomic = addr;
		if ((HG_INFO_FLAGS(info) & HG_POST) && hg_acquired_known(t, addr))
			return;
		if (!(HG_INFO_FLAGS(info) & (HG_POST | HG_SPIN)) && hg_detect && !t->in_rt && t->tid >= 0 &&
		    addr >= HG_UNMAPPABLE &&
		    (hg_release_known(t, addr, HG_INFO_SIZE(info)) || hg_exchange_c(t, addr, HG_INFO_SIZE(info)))) {
			if (!counted)
				hg_add(&t->accesses, 1, t);
			hg_released(t, addr);
			return;
		}
	}
	if (addr < HG_UNMAPPABLE)
		return; /* the access faults: a null dereference a handler recovers from is no write */
	if (!(HG_INFO_FLAGS(info) & HG_ATOMIC) && hg_ignored(t, HG_INFO_FLAGS(info))) {
		if (!counted)
			hg_add(&t->accesses, 1, t);
		return; /* inside an ignore section (annotations.c) */
	}
	if (!counted && !(HG_INFO_FLAGS(info) & HG_POST)) {
		hg_add(&t->accesses, 1, t);
		if (t->recording && !(HG_INFO_FLAGS(info) & HG_ATOMIC))
			hg_record(t, addr, HG_INFO_FLAGS(info));
	}
	hg_push(t, addr, info, 0);
}

#define HG_CHANGES 2 /* hg_unchanged: the access changes a cell (below) */

/* hg_own_move: an access of t (holding no lock) to the bytes m of one
 * granule finds its cell c (word 0 v) exclusive to t with no owner
 * lockset, in an earlier segment, or lacking some of the bytes, or read
 * where it writes: hg_granule's move to this segment, made here without
 * finding the cell and the thread's state again (the stencil's every
 * location, once per phase). It returns 0 when the cell changed
 * meanwhile: the caller then goes the whole way. hg_own_move_of names
 * the cell in t's record around it (hg_move_begin). */
static __attribute__((target("general-regs-only"), noinline)) int hg_own_move(uint64_t *c, uint64_t v, uint64_t epoch,
									       uint64_t m, uint32_t write, uint64_t info)
{
	uint64_t vt = v & ~SH_TOUCHED_MASK, next = hg_own_next(v, epoch, m, write);
	int same = (vt & ((1ull << SH_STATE_SHIFT) - 1)) == epoch;
	if (next != v && !__atomic_compare_exchange_n(c, &v, next, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return 0;
	hg_history(c, info, epoch >> SH_TID_SHIFT, m, 0, vt, same);
	return 1;
}

/* hg_own_move_of is hg_own_move for thread t, bracketed (hg_move_begin):
 * t stays out of hg_own_move's arguments, which a seventh would push on
 * the stack (the stencil took 4% more). */
__attribute__((target("general-regs-only"), always_inline)) static inline int
hg_own_move_of(struct hg_thread *t, uint64_t *c, uint64_t v, uint64_t epoch, uint64_t m, uint32_t write, uint64_t info)
{
	uint64_t outer = hg_move_begin(hg_moving(t), c);
	int moved = hg_own_move(c, v, epoch, m, write, info);
	hg_move_end(hg_moving(t), outer);
	return moved;
}

/* hg_plain_thread: the thread-wide half of hg_unchanged's conditions
 * (no lock held, not in the runtime, ...), which hold for a whole batch. */
__attribute__((target("general-regs-only"), always_inline)) static inline int hg_plain_thread(const struct hg_thread *t)
{
	return !t->in_rt && !t->nheld && !t->recording && t->tid >= 0 && hg_detect && !t->ignore /* annotations.c */;
}

/* hg_unchanged_at is hg_unchanged for a thread that hg_plain_thread
 * passed, in its segment epoch. */
__attribute__((target("general-regs-only"), always_inline)) static inline int
hg_unchanged_at(struct hg_thread *t, uint64_t epoch, uint64_t addr, uint64_t info)
{
	uint64_t size = HG_INFO_SIZE(info), flags = HG_INFO_FLAGS(info);
	if ((flags & ~(uint64_t)(HG_READ | HG_WRITE)) || size - 1 > 7 || ((flags & HG_WRITE) && hg_spin_used) ||
	    (addr >> SH_CHUNK_SHIFT) != ((addr + size - 1) >> SH_CHUNK_SHIFT))
		return 0;
	uint64_t *c = hg_cell(addr);
	if (!c)
		return 0;
	uint64_t w = (uint64_t)SH_EXCL_WRITE << SH_STATE_SHIFT | epoch, r = (uint64_t)SH_EXCL_READ << SH_STATE_SHIFT | epoch;
	uint64_t off = addr & (SH_GRANULE - 1), left = off + size; /* bytes from the first granule's start */
	uint64_t m = hg_first_bytes(off, size);
	for (;;) {
		uint64_t v = __atomic_load_n(c, __ATOMIC_RELAXED), vt = v & ~SH_TOUCHED_MASK;
		uint32_t owner = (uint32_t)__atomic_load_n(&c[1], __ATOMIC_RELAXED);
		if (((v >> SH_TOUCHED_SHIFT) & m) != m || owner != 0 || (vt != w && ((flags & HG_WRITE) || vt != r))) {
			uint64_t state = vt >> SH_STATE_SHIFT;
			if (off + size <= SH_GRANULE && owner == 0 &&
			    (state == SH_EXCL_READ || state == SH_EXCL_WRITE) &&
			    (((vt ^ epoch) >> SH_TID_SHIFT) & HG_CELL_TID_MASK) == 0 &&
			    hg_own_move_of(t, c, v, epoch, m << SH_TOUCHED_SHIFT, flags & HG_WRITE, info))
				return 1;
			return HG_CHANGES;
		}
		if (left <= SH_GRANULE) /* an access of part of a granule is remembered here if need be (no lock held) */
			return __builtin_expect(size < SH_GRANULE, 0)
				       ? hg_unchanged_own(t, c, v, epoch, m << SH_TOUCHED_SHIFT, m << SH_TOUCHED_SHIFT, info, 0)
				       : 1;
		left -= SH_GRANULE;
		c += SH_CELL_WORDS;
		m = hg_next_bytes(left);
	}
}

/* hg_unchanged: the access (plain, of up to 8 bytes within one chunk of
 * shadow, by a thread that holds no lock and is not in the runtime)
 * leaves its cells as they are: each is exclusive to the thread in its
 * current segment, for writing (or for reading, and the access reads),
 * with the access's bytes in it touched already and no lockset.
 * hg_granule would return 1 for each and change nothing; hg_access would
 * do nothing else but count the access. It returns 1 then, and after
 * moving a one-granule access's own cell to the current segment
 * (hg_own_move), or remembering an access of part of a granule
 * (hg_unchanged_own); HG_CHANGES when the access is such an access but a
 * cell changes otherwise, else 0. */
__attribute__((target("general-regs-only"), always_inline)) static inline int hg_unchanged(struct hg_thread *t,
											      uint64_t addr,
											      uint64_t info)
{
	if (!hg_plain_thread(t))
		return 0;
	return hg_unchanged_at(t, hg_tstate[t->tid].epoch, addr, info);
}

/* hg_access_changes settles an access that hg_unchanged found would
 * change a cell (the thread's own data in a new segment, mostly), as
 * hg_access_any does, whose checks hg_unchanged made already; what the
 * fast path cannot settle goes on to hg_access_any. Out of line, and
 * called last, so that the common case keeps few registers. (bench/calls.c
 * makes every access so; it saves about 2% there.) */
static __attribute__((target("general-regs-only"), noinline)) void hg_access_changes(struct hg_thread *t, uint64_t addr,
											uint64_t info, uint64_t sp)
{
	if (hg_handled(t, addr, HG_INFO_SIZE(info), HG_INFO_FLAGS(info), info))
		t->accesses++;
	else
		hg_access_any(addr, info, sp);
}

/* hg_access_one is one access: the commonest case, an access that
 * changes nothing (hg_unchanged), is settled first; the rest goes to
 * hg_access_any. */
__attribute__((target("general-regs-only"), always_inline)) static inline void hg_access_one(uint64_t addr, uint64_t info,
													 uint64_t sp)
{
	struct hg_thread *t = hg_self;
	int u = t != NULL ? hg_unchanged(t, addr, info) : 0;
	if (__builtin_expect(u == 1, 1)) {
		t->accesses++;
		return;
	}
	if (u == HG_CHANGES)
		hg_access_changes(t, addr, info, sp);
	else
		hg_access_any(addr, info, sp);
}

/* The trampolines' entry points, hg_access and hg_access_batch, are
 * assembly stubs around C functions of the usual calling convention
 * (HG_PLAIN), hg_access_c and hg_access_batch_c. The trampoline saved
 * the flags (when they are live), rdi and rsi; a stub saves the other
 * registers a C function may clobber, once, and calls. Compiled as
 * no_caller_saved_registers functions themselves (HG_FAST), the entry
 * points saved every register they used on any path, 16 pushes and pops
 * on every access, and hg_access_any as many again on every access it
 * took (about 3% of bench/calls.c's time, whose accesses all take it).
 * The stubs keep the stack aligned for the C code and describe their
 * frame for unwinders. */
#define HG_STR2(x) #x
#define HG_STR(x) HG_STR2(x)
#define HG_STUB(name, target, before)                                                  \
	__asm__(".text\n"                                                             \
		".globl " #name "\n"                                                    \
		".type " #name ", @function\n"                                          \
		".p2align 4\n" #name ":\n"                                             \
		".cfi_startproc\n"                                                     \
		"push %rbp\n"                                                          \
		".cfi_def_cfa_offset 16\n"                                             \
		".cfi_offset %rbp, -16\n"                                              \
		"mov %rsp, %rbp\n"                                                     \
		".cfi_def_cfa_register %rbp\n"                                         \
		"push %rax\n push %rcx\n push %rdx\n push %r8\n"                       \
		"push %r9\n push %r10\n push %r11\n" before "and $-16, %rsp\n"          \
		"call " #target "\n"                                                    \
		"lea -56(%rbp), %rsp\n"                                                \
		"pop %r11\n pop %r10\n pop %r9\n pop %r8\n"                             \
		"pop %rdx\n pop %rcx\n pop %rax\n pop %rbp\n"                          \
		".cfi_def_cfa %rsp, 8\n"                                               \
		"ret\n"                                                                \
		".cfi_endproc\n"                                                       \
		".size " #name ", .-" #name "\n")

/* hg_access is the trampolines' entry point for one access. The
 * program's stack pointer at the access is where the trampoline's was
 * before its call (the CFA of the stub, rbp + 16 there) plus what it
 * saved (HG_TRAMPOLINE_SAVED, at most): the third argument. */
HG_STUB(hg_access, hg_access_c, "lea 16+" HG_STR(HG_TRAMPOLINE_SAVED) "(%rbp), %rdx\n");

HG_PLAIN void hg_access_c(uint64_t addr, uint64_t info, uint64_t sp)
{
	/* The check comes before the access: without this, the program's
	 * miss on its data waits for the check's miss on the cell, where
	 * the two can overlap (bench/locks.c, which walks hash chains:
	 * 1.16 -> 1.07 s, 11 runs interleaved; its own code fell from 6% of
	 * the samples to nothing). A prefetch never faults. Batches go
	 * without: the stencil's come from the hardware prefetcher, and it
	 * took 1% longer with them. */
	__builtin_prefetch((const void *)(uintptr_t)addr, 0, 3);
	/* A read inside a lock-protected region that leaves the thread's
	 * own cells looks its address up in the published writes
	 * (hg_handoff_quiet), a 2 MB table: that miss came after the
	 * cell's, 15% of bench/locks.c's samples, and overlaps it now (6.5%;
	 * CPU time 3% less, medians of 6 runs of `perf stat`). */
	struct hg_thread *t = hg_self;
	if (t != NULL && t->recording && (HG_INFO_FLAGS(info) & HG_READ)) {
		uintptr_t base = __atomic_load_n(&hg_handoff_keys[0], __ATOMIC_RELAXED);
		if (base > HG_HANDOFF_IN_HEAP)
			__builtin_prefetch(hg_wslot_of(base, hg_wkey(addr)), 0, 3);
	}
	hg_access_one(addr, info, sp);
}

/* hg_access_batch is the trampolines' entry point for a group of
 * accesses of one basic block (patch, elide.Batches): pairs holds n
 * (address, info) pairs in the order the block makes them. One call
 * checks them all, before the first of them is made: the block does not
 * synchronise in between, nor change their addresses' registers. */
HG_STUB(hg_access_batch, hg_access_batch_c, "");

HG_PLAIN void hg_access_batch_c(const uint64_t *pairs, uint64_t n)
{
	/* the pairs sit right below what the trampoline saved */
	uint64_t sp = (uint64_t)(uintptr_t)pairs + 16 * n + HG_TRAMPOLINE_SAVED;
	uint64_t i = 0;
	struct hg_thread *t = hg_self;
	if (t != NULL && hg_plain_thread(t)) {
		/* the thread's state holds for the batch (no synchronisation
		 * between its accesses) until an access leaves this loop */
		uint64_t epoch = hg_tstate[t->tid].epoch;
		for (; i < n && hg_unchanged_at(t, epoch, pairs[2 * i], pairs[2 * i + 1]) == 1; i++)
			t->accesses++;
	}
	for (; i < n; i++)
		hg_access_one(pairs[2 * i], pairs[2 * i + 1], sp);
}

/* hg_rejoined: the fast path joined a published segment for the access
 * (hg_handoff_join) and declined it; one of a single granule goes the
 * fast path again, in the new segment, as the Go side makes the access's
 * step after its join. One of more granules goes to the Go side: those
 * settled before the join would be settled twice. */
static __attribute__((target("general-regs-only"), noinline)) int hg_rejoined(struct hg_thread *t, uint64_t addr,
									       uint64_t info)
{
	t->rejoined = 0;
	return (addr & (SH_GRANULE - 1)) + HG_INFO_SIZE(info) <= SH_GRANULE &&
	       hg_handled(t, addr, HG_INFO_SIZE(info), HG_INFO_FLAGS(info), info);
}

/* hg_access_any is hg_access for any access: the fast path's other
 * cases (hg_handled), then the Go side (hg_access_slow); sp is the
 * program's stack pointer at the access (hg_access). */
HG_PLAIN void hg_access_any(uint64_t addr, uint64_t info, uint64_t sp)
{
	struct hg_thread *t = hg_self;
	uint32_t flags = HG_INFO_FLAGS(info);
	/* hg_overflow has in_rt set and never gets here */
	if (__builtin_expect(t != NULL && !(flags & (HG_HOOK | HG_SPIN | HG_ATOMIC)) && !t->in_rt &&
				     !(hg_spin_used && (flags & HG_WRITE)),
			     1)) {
		t->accesses++;
		if (hg_ignored(t, flags))
			return; /* inside an ignore section (annotations.c) */
		if (__builtin_expect(t->recording, 0))
			hg_record(t, addr, flags);
		if (hg_detect && t->tid >= 0 && hg_handled(t, addr, HG_INFO_SIZE(info), flags, info))
			return;
		if (t->rejoined && hg_rejoined(t, addr, info))
			return;
		t->access_sp = sp; /* the event carries it (hg_push) */
		hg_access_slow(addr, info, 1);
		t->access_sp = 0;
		return;
	}
	if (t != NULL && !t->in_rt)
		t->access_sp = sp; /* a write where spin variables are in use, an atomic: hg_push keeps it for plain accesses only */
	hg_access_slow(addr, info, 0);
	if (t != NULL && !t->in_rt)
		t->access_sp = 0;
}

/* hg_own_now: the cell is the thread's own in its current segment
 * (Exclusive-Read or -Write with epoch) and holds no owner's locks or
 * exactly locks: a write there changes nothing but the state and the
 * history (hg_granule's own case), which a release resets right after. */
__attribute__((target("general-regs-only"), always_inline)) static inline int hg_own_now(const uint64_t *cell, uint64_t epoch,
											    uint32_t locks)
{
	uint64_t vt = __atomic_load_n(cell, __ATOMIC_RELAXED) & ~SH_TOUCHED_MASK, state = vt >> SH_STATE_SHIFT;
	uint32_t owner = (uint32_t)__atomic_load_n(&cell[1], __ATOMIC_RELAXED);
	return (state == SH_EXCL_READ || state == SH_EXCL_WRITE) && (vt & ((1ull << SH_STATE_SHIFT) - 1)) == epoch &&
	       (owner == 0 || owner == locks);
}

/* hg_range_walk applies the fast path to a range access granule by
 * granule from its start, and returns how many of its len bytes it
 * settled. For a release (a free's write to the block, whose shadow is
 * reset next) a granule the thread owns in its current segment is settled
 * without being written (hg_own_now): a consumer that read a block it was
 * handed and frees it wrote each granule's cell only to have it cleared
 * (bench/handoff.c). */
__attribute__((target("general-regs-only"), always_inline)) static inline uint64_t
hg_range_walk(struct hg_thread *t, uint64_t addr, uint64_t len, uint64_t info, int release)
{
	uint32_t flags = HG_INFO_FLAGS(info), write = flags & HG_WRITE;
	if (!hg_detect || t->in_rt || t->tid < 0 || t->sig_depth > 0 || (flags & (HG_ATOMIC | HG_HOOK | HG_SPIN)) ||
	    (hg_spin_used && write) || addr >= SH_MAX_ADDR || len > SH_MAX_ADDR - addr)
		return 0;
	uint64_t epoch = hg_tstate[t->tid].epoch, end = addr + len, a = addr;
	uint32_t locks = hg_thread_locks(t, write);
	info = HG_INFO(HG_INFO_PC(info), 1, flags);
	while (a < end) {
		uint64_t *cell = hg_cell(a);
		uint64_t off = a & (SH_GRANULE - 1), n = end - a < SH_GRANULE - off ? end - a : SH_GRANULE - off;
		if (!cell || (!(release && hg_own_now(cell, epoch, locks)) &&
			      !hg_granule(t, cell, epoch, ((1ull << n) - 1) << off << SH_TOUCHED_SHIFT,
					  ((1ull << n) - 1) << off << SH_TOUCHED_SHIFT, write, info, locks, a, n)))
			break;
		a += n;
	}
	t->rejoined = 0; /* a join for a granule (hg_handoff_join): the rest goes to the Go side */
	return a - addr;
}

/* hg_range_settled applies the fast path to a range access (a string
 * instruction, or a wrapped memcpy and its kind) granule by granule from
 * its start, and returns how many of its len bytes it settled: the rest
 * goes to the Go side as a range of its own. The history words take each
 * granule's bytes (the size field of info 1: a byte mask). */
uint64_t hg_range_settled(struct hg_thread *t, uint64_t addr, uint64_t len, uint64_t info)
{
	return hg_range_walk(t, addr, len, info, 0);
}

/* hg_release_settled is hg_range_settled for the write that checks a
 * heap block's release, made just before the block's shadow is reset. */
uint64_t hg_release_settled(struct hg_thread *t, uint64_t addr, uint64_t len, uint64_t pc)
{
	return hg_range_walk(t, addr, len, HG_INFO(pc, 1, HG_WRITE), 1);
}

HG_FAST void hg_range(uint64_t addr, uint64_t info, uint64_t count)
{
	struct hg_thread *t = hg_self;
	if (__builtin_expect(t == NULL, 0))
		t = hg_register();
	uint64_t len = count * HG_INFO_SIZE(info);
	hg_add(&t->ranges, 1, t);
	hg_add(&t->bytes, len, t);
	if (addr < HG_UNMAPPABLE || hg_ignored(t, HG_INFO_FLAGS(info)))
		return; /* faults, or inside an ignore section (annotations.c) */
	if (len && t->recording)
		hg_record(t, addr, HG_INFO_FLAGS(info));
	uint64_t done = len ? hg_range_settled(t, addr, len, info) : 0;
	if (done < len)
		hg_push(t, addr + done, info, len - done);
}
