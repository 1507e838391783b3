/* regionpub.c: a lock-protected region published in C.
 *
 * At its unlock a region's writes go to the published writes' table
 * (runtime/detect/segtable.go), so that a later region of another thread
 * that reads them under the mutex is ordered after this one, and its
 * reads go to the reader log (readlog.go), for a later writer. That used
 * to be a call into the Go side per region, a microsecond each:
 * bench/readmostly.c made 80 thousand such calls, bench/locks.c a
 * million, and took twice and three times ThreadSanitizer's time.
 *
 * A table's way holds a key, the segment's epoch and a clock snapshot.
 * The Go side keeps its snapshots in its heap, where the C side can
 * neither make nor keep one; the C side keeps its own in the thread's
 * snapshot ring (hg_snaps, rt_internal.h), where the Go side pushes
 * each snapshot it makes too (pushSnapshot): before it publishes a
 * region, the ring's newest entry must hold the thread's clock (its row,
 * which the Go side keeps equal to the clock but for the thread's own
 * component), and under a mutex used with condition variables a new
 * entry is pushed when it does not (after a join the C side made; other
 * regions then go to the Go side, which makes a snapshot). The ways
 * written here carry a flag that says so, and their epoch finds the
 * entry (hg_snap_at; the Go side's snapshotAt). The Go side writes each
 * such way's clock into the way (thread.materialize, from the list in
 * the record) at the thread's next snapshot, at its calls once the list
 * or the ring is half full, and at its end: the ring keeps HG_SNAPS
 * entries, and takes no new one in the place of an entry such a way may
 * name (that region goes to the Go side). The thread's own component
 * comes from the way's epoch, as for every published segment.
 *
 * Until 2026-11-28 the flag meant "the thread's current snapshot", a Go
 * object, which the Go side made at its first publication after each
 * join: a region that followed a join in C went to the Go side for a new
 * snapshot, and the C side could not join while it had written a way
 * under the old one.
 *
 * A region is published here when it held one mutex, in write mode if it
 * wrote, and nothing else the Go side must see happened in it (no wait,
 * signal or nested lock, nothing buffered that changes the clock); when
 * its reads find a way of the reader log as the Go side's put would pick
 * it (the thread's own, another thread's way of the mutex that the
 * thread's clock covers, or a free one); and when each written variable
 * finds its way or a free one (an eviction folds the old entry into the
 * overflow, in Go). Else the region goes
 * to the Go side, which publishes it whole again, at the same epoch: the
 * ways written here meanwhile hold what it writes there. Then the C side
 * moves the thread to its next segment itself, as the Go side's tick
 * would (hg_tstate and the call trace's mark); the unlock event says so
 * (HG_LOCK_TICKED), and the Go side ticks its copy of the clock when it
 * processes the event. Wrappers flush before any other call into Go
 * (wrap.h, GO), so the Go side's tick comes before anything else it does
 * for the thread.
 *
 * The reads of a region whose way is the thread's own, published after
 * the thread's last join (joined_at, from cRecord.KnowJoin), need no
 * flag: the way's snapshot is the thread's clock still.
 *
 * A thread holds a slot's or a way's lock for a few stores here; Go
 * readers wait for it (a thread stopped inside, by a debugger or
 * SIGSTOP, stops them too until it goes on).
 */
#define _GNU_SOURCE
#include "rt_internal.h"

/* hg_rlway_add makes way w (taken by the caller) hold the reads t
 * recorded in its region too, as readLog.putUnder merges them: past
 * HG_RL_KEYS granules, or for a region that read more than it recorded,
 * the way stands for every variable (HG_RL_ALL). */
static void hg_rlway_add(struct hg_rlway *w, const struct hg_thread *t)
{
	uint64_t n = __atomic_load_n(&w->n, __ATOMIC_RELAXED);
	if (n > HG_RL_KEYS)
		return;
	if (t->rec_r_all) {
		__atomic_store_n(&w->n, HG_RL_ALL, __ATOMIC_RELAXED);
		return;
	}
	for (int i = 0; i < t->nrec_r; i++) {
		uint64_t key = (t->rec_r[i] & ~(uint64_t)(SH_GRANULE - 1)) + 1, j = 0;
		while (j < n && __atomic_load_n(&w->keys[j], __ATOMIC_RELAXED) != key)
			j++;
		if (j < n)
			continue;
		if (n == HG_RL_KEYS) {
			__atomic_store_n(&w->n, HG_RL_ALL, __ATOMIC_RELAXED);
			return;
		}
		__atomic_store_n(&w->keys[n++], key, __ATOMIC_RELAXED);
		__atomic_store_n(&w->n, n, __ATOMIC_RELAXED);
	}
}

/* hg_region_quiet: t's region of m did nothing the Go side must see at
 * its end but read and write (no signal or wait the Go side handles, no
 * nested lock; m alone held, in write mode if it wrote; its writes all
 * recorded), and the Go side's clock of t is its epoch. A region that
 * left a wait loop the C side settled (waited_c) must know the segments
 * of the reads it made after that, which the Go side would join
 * (runtime/detect, regionEnd). */
int hg_region_quiet(struct hg_thread *t, uint64_t m)
{
	int found;
	if (!hg_opts.handoff || t->tid < 0 || t->go_pending || t->sig_n || t->sig_acq || !t->recording ||
	    t->region_mutex != m || t->signalled || t->waited || t->nnest || t->nheld != 1 || hg_remote_on() ||
	    (t->waited_c && !hg_reads_known(t, t->hook_joined, &found)))
		return 0;
	if (!t->wrote)
		return t->nrec_r > 0 && t->ncmade < HG_CMADE;
	return t->nrec_w > 0 && !t->region_read && t->ncmade + t->nrec_w + 1 <= HG_CMADE;
}

/* hg_note_cmade: t wrote way w of table (0 the published writes, 1 the
 * reader log) with its clock in t's snapshot ring; the Go side gives the
 * way its clock at t's next call (hg_region_quiet leaves room). */
static void hg_note_cmade(struct hg_thread *t, int table, uint32_t w)
{
	t->cmade[t->ncmade++] = (uint32_t)table << 31 | w;
}

/* hg_snaps_new is an empty snapshot ring whose entries hold cap
 * components (the C library's allocator: a ring is never freed, since
 * another thread may be reading it; a thread's id keeps its ring for
 * the threads that have the id later). */
static struct hg_snaps *hg_snaps_new(uint64_t cap)
{
	size_t size = sizeof(struct hg_snaps) + HG_SNAPS * (3 + cap) * 8;
	struct hg_snaps *r = __libc_malloc(size);
	if (r) {
		__builtin_memset(r, 0, size);
		r->cap = cap;
	}
	return r;
}

/* hg_snap_push makes the newest entry of t's snapshot ring hold t's
 * clock (its row, hw components, and now for its own), pushing an entry
 * unless the newest holds it already. 0 when t has no ring and none can
 * be had, the region may not push (may_push 0: not under a mutex used
 * with condition variables), or the entry to push would take the place
 * of one that a way not yet materialized may name (snap_keep): a way
 * keeps the clock of its region that way, until the Go side writes it
 * in. */
static int hg_snap_push(struct hg_thread *t, uint64_t now, const uint64_t *row, uint64_t hw, int may_push)
{
	uint64_t self = (uint64_t)t->tid;
	struct hg_snaps *r = (struct hg_snaps *)(uintptr_t)hg_tstate[self].snaps;
	if (!r || r->cap < hw) {
		/* a bigger one, for more threads (once no way names an entry
		 * of the old one, which stays where readers may be) */
		if (t->ncmade || !may_push)
			return 0;
		r = hg_snaps_new(hw <= 8 ? 8 : HG_JOIN_TIDS);
		if (!r)
			return 0;
		__atomic_store_n(&hg_tstate[self].snaps, (uint64_t)(uintptr_t)r, __ATOMIC_RELEASE);
	}
	uint64_t h = r->head, v = 0;
	if (h > 0) {
		const struct hg_snap *e = hg_snap_entry(r, h - 1);
		while (v < hw && (v == self || (v < e->n ? e->c[v] : 0) == __atomic_load_n(&row[v], __ATOMIC_RELAXED)))
			v++;
		if (v == hw && e->n <= hw)
			return 1; /* no join since */
	}
	if (!may_push || (t->ncmade && h >= t->snap_keep + HG_SNAPS))
		return 0;
	struct hg_snap *e = hg_snap_entry(r, h);
	__atomic_store_n(&e->seq, 2 * h + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&e->from, now, __ATOMIC_RELAXED);
	__atomic_store_n(&e->n, hw, __ATOMIC_RELAXED);
	for (v = 0; v < hw; v++)
		__atomic_store_n(&e->c[v], v == self ? now : __atomic_load_n(&row[v], __ATOMIC_RELAXED), __ATOMIC_RELAXED);
	__atomic_store_n(&e->seq, 2 * h + 2, __ATOMIC_RELEASE);
	__atomic_store_n(&r->head, h + 1, __ATOMIC_RELEASE);
	return 1;
}

/* hg_rlway_pick is the way of the reader log slot w (under mutex m)
 * that t's region publishes its reads into, as readLog.putUnder picks
 * it: t's own way of m, else one of m whose segment t's clock (known,
 * its row) covers, which t takes over, else a free one; -1 for none. */
static int hg_rlway_pick(struct hg_rlway *w, const struct hg_thread *t, uint64_t m, const uint64_t *known)
{
	int covered = -1, free = -1;
	for (int j = 0; j < HG_RL_WAYS; j++) {
		uint64_t wm = __atomic_load_n(&w[j].mutex, __ATOMIC_RELAXED);
		if (wm == 0) {
			if (free < 0)
				free = j;
			continue;
		}
		if (wm != m)
			continue;
		uint64_t e = __atomic_load_n(&w[j].epoch, __ATOMIC_RELAXED), tid = e >> 48;
		if (tid == (uint64_t)t->tid)
			return j;
		if (covered < 0 && tid < HG_MAX_THREADS && known[tid] >= (e & HG_WAY_CLOCK))
			covered = j;
	}
	return covered >= 0 ? covered : free;
}

/* hg_reads_publish makes the region's reads, at the epoch e (tid << 48
 * | clock), part of a way of the reader log under m. The way's clock
 * becomes the one t's snapshot ring holds for e (HG_RL_CMADE), unless it
 * is t's own way published after t's last join, whose snapshot is t's
 * clock still. */
static int hg_reads_publish(struct hg_thread *t, uint64_t m, uint64_t e)
{
	uintptr_t base = __atomic_load_n(&hg_handoff_keys[1], __ATOMIC_ACQUIRE);
	const uint64_t *known = __atomic_load_n(&hg_clocks, __ATOMIC_ACQUIRE);
	if (!base || base == HG_HANDOFF_IN_HEAP || !known)
		return 0;
	known += (uint64_t)t->tid * HG_MAX_THREADS;
	uint64_t slot = hg_hash(m >> 2, hg_handoff_bits[1]) * HG_RL_WAYS;
	struct hg_rlway *ways = (struct hg_rlway *)(base + 64) + slot;
	int j = hg_rlway_pick(ways, t, m, known);
	if (j < 0)
		return 0;
	struct hg_rlway *w = &ways[j];
	uint64_t s;
	if (!hg_seq_take(&w->seq, &s))
		return 0;
	uint64_t wm = __atomic_load_n(&w->mutex, __ATOMIC_RELAXED), old = __atomic_load_n(&w->epoch, __ATOMIC_RELAXED);
	int own = wm == m && (old >> 48) == (uint64_t)t->tid;
	int current = own && ((old & HG_WAY_CLOCK) > t->joined_at || (w->flags & HG_RL_CMADE));
	if (!current && hg_rlway_pick(ways, t, m, known) != j) { /* changed before the way was taken */
		__atomic_store_n(&w->seq, s + 2, __ATOMIC_RELEASE); /* changed nothing; readers only look again */
		return 0;
	}
	if (wm == 0) {
		__atomic_store_n(&w->n, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&w->mutex, m, __ATOMIC_RELAXED);
	}
	hg_rlway_add(w, t);
	if (!current) {
		/* published before t's last join, or another thread's: the
		 * ring's entry for e holds for the way from now on */
		__atomic_store_n(&w->flags, HG_RL_CMADE, __ATOMIC_RELAXED);
		hg_note_cmade(t, 1, (uint32_t)(slot + (uint64_t)j));
	}
	__atomic_store_n(&w->epoch, e, __ATOMIC_RELAXED);
	__atomic_store_n(&w->seq, s + 2, __ATOMIC_RELEASE);
	return 1;
}

/* hg_over_clock reads into over[0..hw) the clock of the published
 * writes' overflow segment (h) when it stands for any mutex, as a
 * reader of h's seq: the Go side keeps the segment whose clock h names.
 * 0 when there is none, it names mutexes, a fold is under way, or the
 * clock reaches past hw thread ids. */
static int hg_over_clock(const struct hg_over_head *h, uint64_t *over, uint64_t hw)
{
	uint64_t q = __atomic_load_n(&h->seq, __ATOMIC_ACQUIRE);
	uintptr_t vc = __atomic_load_n(&h->any_clock, __ATOMIC_ACQUIRE);
	return !(q & 1) && hg_vc_read_seq(&h->seq, q, vc, hw, over);
}

/* hg_covered_way is a way of the full slot s, which the caller holds,
 * whose segment the overflow (its clock over, for any mutex) covers:
 * it happens before the overflow, which stands for it already when the
 * way is emptied (segTable.evict prefers such a way too; one it does
 * not cover is folded into the overflow, which is the Go side's). The
 * way's clock is read in place (the Go side changes it only under the
 * slot's lock): the snapshot the slot's refs hold for a way the Go side
 * wrote, the entry of its thread's snapshot ring for one the C side
 * wrote. -1 for none. */
static int hg_covered_way(const struct hg_wslot *s, const uint64_t *over, uint64_t hw)
{
	for (int w = 0; w < 8; w++) {
		uint64_t e = __atomic_load_n(&s->way[w][1], __ATOMIC_RELAXED), u = e >> 48;
		if (u >= hw || over[u] < (e & HG_WAY_CLOCK))
			continue;
		uint64_t clock[HG_JOIN_TIDS], k = 0;
		if (__atomic_load_n(&s->cmade, __ATOMIC_RELAXED) & (1ull << w)) {
			if (!hg_snap_at(u, e & HG_WAY_CLOCK, hw, clock))
				continue;
		} else {
			uintptr_t refs = __atomic_load_n(&s->refs, __ATOMIC_RELAXED);
			uintptr_t vc = refs ? __atomic_load_n((uintptr_t *)(refs + 8 * (uint64_t)w), __ATOMIC_RELAXED) : 0;
			const uint64_t *c;
			uint64_t n;
			if (!vc || !hg_vc_header(vc, hw, &c, &n))
				continue;
			for (uint64_t v = 0; v < hw; v++)
				clock[v] = v < n ? __atomic_load_n(&c[v], __ATOMIC_RELAXED) : 0;
		}
		while (k < hw && clock[k] <= over[k])
			k++;
		if (k == hw)
			return w;
	}
	return -1;
}

/* hg_write_publish makes the epoch e, under mutex m, key's entry in the
 * published writes (segTable.put): the way that holds key, else a free
 * one, else one the overflow covers (hg_covered_way), taken under the
 * slot's lock. It fails when the slot is full of ways the overflow does
 * not cover (an eviction that folds is the Go side's) or its lock is
 * taken. */
static int hg_write_publish(struct hg_thread *t, uintptr_t base, uint64_t key, uint64_t e, uint64_t m)
{
	uint64_t i = hg_hash(key >> 2, hg_handoff_bits[0]);
	struct hg_wslot *s = (struct hg_wslot *)(base + 64) + i;
	uint64_t seq;
	if (!hg_seq_take(&s->seq, &seq))
		return 0;
	int v = -1, free = -1;
	for (int j = 0; j < 8; j++) {
		uint64_t k = __atomic_load_n(&s->way[j][0], __ATOMIC_RELAXED);
		if (k == key) {
			if (v < 0)
				v = j;
			else
				__atomic_store_n(&s->way[j][0], 0, __ATOMIC_RELAXED); /* one entry stands for both */
		} else if (k == 0 && free < 0) {
			free = j;
		}
	}
	int same = v >= 0;
	if (!same)
		v = free;
	if (v < 0) {
		uint64_t over[HG_JOIN_TIDS], hw = __atomic_load_n(&hg_tid_hw, __ATOMIC_ACQUIRE);
		if (hw <= HG_JOIN_TIDS && hg_over_clock((const struct hg_over_head *)base, over, hw))
			v = hg_covered_way(s, over, hw);
	}
	if (v < 0) {
		__atomic_store_n(&s->seq, seq + 2, __ATOMIC_RELEASE);
		return 0;
	}
	uint64_t bit = 1ull << v, cmade = __atomic_load_n(&s->cmade, __ATOMIC_RELAXED);
	uint64_t old = __atomic_load_n(&s->way[v][1], __ATOMIC_RELAXED);
	if (!same)
		__atomic_store_n(&s->way[v][0], 0, __ATOMIC_RELAXED); /* the C side's readers: not key's while the epoch changes */
	__atomic_store_n(&s->mutex[v], m, __ATOMIC_RELAXED);
	__atomic_store_n(&s->cmade, cmade | bit, __ATOMIC_RELAXED);
	s->used[v] = ++s->puts; /* under the lock, as segTable.put */
	__atomic_store_n(&s->way[v][1], e, __ATOMIC_RELAXED);
	if (!same)
		__atomic_store_n(&s->way[v][0], key, __ATOMIC_RELEASE); /* after the epoch, for hg_handoff_news */
	__atomic_store_n(&s->seq, seq + 2, __ATOMIC_RELEASE);
	if (!(same && (cmade & bit) && (old >> 48) == (e >> 48)))
		hg_note_cmade(t, 0, (uint32_t)(i * 8 + (uint64_t)v)); /* not noted yet */
	return 1;
}

/* hg_snap_push_go pushes thread t's clock c[0..n) (its own component
 * from) onto its snapshot ring, for the clock snapshot its Go side made
 * (runtime/detect, thread.snapshot): the C side's later regions, until
 * the thread's next join, publish under it. The Go side has taken every
 * way the C side wrote (none names an entry), so only a ring that cannot
 * be had leaves it out, and the C side then publishes nothing. */
void hg_snap_push_go(struct hg_thread *t, uint64_t from, const uint64_t *c, uint64_t n)
{
	if (t->tid >= 0 && n <= HG_JOIN_TIDS && (uint64_t)t->tid < n)
		hg_snap_push(t, from & HG_CELL_CLOCK, c, n, 1);
}

/* general registers only: the fast path calls it from instrumented code
 * (fastpath.c, hg_acquired_known), where the program's vector registers
 * are live. */
__attribute__((target("general-regs-only"))) int hg_begin_segment(struct hg_thread *t)
{
	uint64_t now = __atomic_load_n(&hg_tstate[t->tid].epoch, __ATOMIC_RELAXED);
	if (!hg_clock_room(now))
		return 0;
	__atomic_store_n(&hg_tstate[t->tid].epoch, now + 1, __ATOMIC_RELAXED);
	hg_trace_mark_epoch(now + 1);
	t->c_ticked = 1;
	return 1;
}

int hg_region_publish(struct hg_thread *t, uint64_t m, int cvm)
{
	if (!hg_region_quiet(t, m))
		return 0;
	uint64_t self = (uint64_t)t->tid, now = __atomic_load_n(&hg_tstate[self].epoch, __ATOMIC_RELAXED);
	const uint64_t *rows = __atomic_load_n(&hg_clocks, __ATOMIC_ACQUIRE);
	uint64_t hw = __atomic_load_n(&hg_tid_hw, __ATOMIC_ACQUIRE);
	if (!hg_clock_room(now) || !rows || hw > HG_JOIN_TIDS || self >= hw ||
	    !hg_snap_push(t, now & HG_CELL_CLOCK, rows + self * HG_MAX_THREADS, hw, cvm))
		return 0;
	uint64_t e = self << 48 | (now & HG_CELL_CLOCK);
	if (t->nrec_r > 0 && !hg_reads_publish(t, m, e))
		return 0;
	if (t->nrec_w > 0) {
		uintptr_t base = __atomic_load_n(&hg_handoff_keys[0], __ATOMIC_ACQUIRE);
		if (!base || base == HG_HANDOFF_IN_HEAP)
			return 0;
		for (int k = 0; k < t->nrec_w; k++)
			if (!hg_write_publish(t, base, hg_wkey(t->rec_w[k]), e, m))
				return 0;
	}
	return hg_begin_segment(t); /* checked above: it cannot fail */
}
