/* lockview.c: what the fast path knows of the thread's locksets.
 *
 * Lock and unlock travel in the event buffer (wrappers.c), so the Go side
 * changes a thread's locksets only when it processes them, at the next
 * flush. Until then the fast path would not know the lockset ids that
 * guard the thread's accesses, and every access inside a short critical
 * section would go to the Go side. The Go side's lockset changes are
 * functions of the lockset ids before, the mutex and the operation (ids
 * are interned and never reused, shadow/sets.go), so the C side carries
 * its view across lock events itself, from a per-thread cache of the
 * transitions the Go side made before (hg_thread.lkc, filled through
 * Region.NoteLockStep): a first acquisition of a mutex, or the last release
 * of one (the thread's hold counts tell a recursive hold apart, which
 * changes nothing). A transition not in the cache leaves the view
 * unknown until the next flush, which takes hg_tstate's locks again.
 * Behind each thread's cache, a table that the process's threads share
 * (hg_lkg) holds every transition any of them was handed: the ids are
 * the process's, so a transition one thread learnt holds for all.
 */
#define _GNU_SOURCE
#include "rt_internal.h"

#include <stddef.h>

/* hg_lkc_pair: the transitions are kept two-way set-associative, in
 * pairs of entries chosen by the hash of the operation and the lockset
 * ids before it (a thread cycling through 64 striped mutexes would
 * otherwise evict its own entries by collision; with 64 entries,
 * bench/locks.c's 64 stripes sent 150 thousand accesses a run to the Go
 * side for want of the lockset). A mutex taken both with no other lock
 * held and inside another's region has an entry for each: keyed by the
 * operation alone, until 2026-11-29, the two evicted each other, and
 * memcached (an item's lock taken alone and under a list's lock, a
 * thread's statistics lock alone and under a connection's) lost its
 * lockset in C at 430 thousand of 1.5 million lock operations in ten
 * seconds of load, every access up to the next flush going to the Go
 * side. */
/* hg_lkc_hash is the pair of a table of 2^bits pairs that holds the
 * transition key from the lockset ids before (the threads' caches and
 * the shared table alike). */
static inline uint64_t hg_lkc_hash(uint64_t key, uint64_t before, unsigned bits)
{
	return hg_hash(key ^ (before * 0x9e3779b97f4a7c15ull >> 7), bits);
}

static inline struct hg_lkc *hg_lkc_pair(struct hg_thread *t, uint64_t key, uint64_t before)
{
	return &t->lkc[hg_lkc_hash(key, before, 6) * 2];
}
_Static_assert(HG_LKC == 128, "hg_lkc_pair takes 6 bits");

/* hg_lkc_find is the entry of key from the lockset ids before, or NULL. */
static inline struct hg_lkc *hg_lkc_find(struct hg_thread *t, uint64_t key, uint64_t before)
{
	struct hg_lkc *p = hg_lkc_pair(t, key, before);
	return p[0].key == key && p[0].before == before   ? &p[0]
	       : p[1].key == key && p[1].before == before ? &p[1]
							  : NULL;
}

/* hg_lkg: the transitions of every thread, 2-way set-associative as
 * the threads' caches, behind them: a thread whose cache misses looks
 * here before it gives its view up. A program with more mutexes than a
 * thread's cache holds (memcached's thousands of item locks, each taken
 * alone and under a list's lock) made its threads learn each transition
 * anew, every one a flush of the thread's accesses to the Go side. Only
 * a thread whose cache was full once (lkc_evicted) writes here: the
 * others' transitions fit their own caches, and a program with a few
 * dozen mutexes touches none of the table's pages (1 MB of zeroed
 * memory, touched as entries are written: bench/locks.c's peak memory is
 * a few hundred KB below ThreadSanitizer's). An entry is read without a
 * lock, under its sequence word (odd while a thread writes it; a writer
 * that finds it odd leaves the entry as it is: this is a cache). A
 * forked child's detector has ids of its own: the child stops using the
 * table (hg_lkg_forked). */
#define HG_LKG_BITS 14
struct hg_lkg {
	uint64_t seq, key, before, after;
};
static struct hg_lkg hg_lkg[2 << HG_LKG_BITS] __attribute__((aligned(64)));
static int hg_lkg_off;

void hg_lkg_forked(void) { hg_lkg_off = 1; }

static inline struct hg_lkg *hg_lkg_pair(uint64_t key, uint64_t before)
{
	return &hg_lkg[hg_lkc_hash(key, before, HG_LKG_BITS) * 2];
}

/* hg_lkg_find is the lockset ids after operation key from the ids
 * before, as a thread was handed it; 0 when not found (no transition
 * that the table keeps ends in the empty locksets). */
static uint64_t hg_lkg_find(uint64_t key, uint64_t before)
{
	if (hg_lkg_off)
		return 0;
	struct hg_lkg *p = hg_lkg_pair(key, before);
	for (int i = 0; i < 2; i++) {
		uint64_t q = __atomic_load_n(&p[i].seq, __ATOMIC_ACQUIRE);
		uint64_t k = __atomic_load_n(&p[i].key, __ATOMIC_RELAXED), b = __atomic_load_n(&p[i].before, __ATOMIC_RELAXED);
		uint64_t a = __atomic_load_n(&p[i].after, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (!(q & 1) && k == key && b == before && __atomic_load_n(&p[i].seq, __ATOMIC_RELAXED) == q)
			return a;
	}
	return 0;
}

/* hg_lkg_put adds a transition to the shared table, unless it holds it:
 * a free way, else the one the key's hash names. */
static void hg_lkg_put(uint64_t key, uint64_t before, uint64_t after)
{
	if (hg_lkg_off || after == 0 || hg_lkg_find(key, before) == after)
		return;
	struct hg_lkg *p = hg_lkg_pair(key, before);
	struct hg_lkg *e = __atomic_load_n(&p[0].key, __ATOMIC_RELAXED) == 0 ? &p[0]
			   : __atomic_load_n(&p[1].key, __ATOMIC_RELAXED) == 0 ? &p[1]
									      : &p[(key >> 2) & 1];
	uint64_t q = __atomic_load_n(&e->seq, __ATOMIC_RELAXED);
	if ((q & 1) || !__atomic_compare_exchange_n(&e->seq, &q, q + 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return;
	__atomic_store_n(&e->key, key, __ATOMIC_RELAXED);
	__atomic_store_n(&e->before, before, __ATOMIC_RELAXED);
	__atomic_store_n(&e->after, after, __ATOMIC_RELAXED);
	__atomic_store_n(&e->seq, q + 2, __ATOMIC_RELEASE);
}

/* hg_lkc_keep puts a transition in t's cache. */
static void hg_lkc_keep(struct hg_thread *t, uint64_t key, uint64_t before, uint64_t after)
{
	struct hg_lkc *e = hg_lkc_find(t, key, before);
	if (!e) {
		/* a free way, else the second, whose entry moves to the first
		 * (the older one goes) */
		e = hg_lkc_pair(t, key, before);
		if (e[0].key != 0 && e[1].key != 0) {
			e[0] = e[1];
			t->lkc_evicted = 1;
		}
		if (e[0].key != 0)
			e++;
	}
	e->before = before;
	e->key = key;
	e->after = after;
}

/* hg_lkc_put records a lockset change the Go side made for t, in its
 * cache and the shared table; a release of the last lock is not kept,
 * the view knows that one. */
static void hg_lkc_put(struct hg_thread *t, uint64_t before, uint64_t after, uint64_t mutex, uint32_t op)
{
	if (op == 0 || (op == HG_LOCKSTEP_UNLOCK && after == 0))
		return;
	uint64_t key = mutex << 2 | op;
	hg_lkc_keep(t, key, before, after);
	if (t->lkc_evicted)
		hg_lkg_put(key, before, after);
}

/* hg_lkc_note is hg_lkc_put for thread tid, called by the Go side on the
 * thread itself when its flush has more transitions than lkc_q holds. */
void hg_lkc_note(int32_t tid, uint64_t before, uint64_t after, uint64_t mutex, uint32_t op)
{
	struct hg_thread *t = hg_self;
	if (t && t != &hg_overflow && t->tid == tid)
		hg_lkc_put(t, before, after, mutex, op);
}

/* hg_lkc_drain takes the transitions the Go side queued in t's flush. */
void hg_lkc_drain(struct hg_thread *t)
{
	for (uint32_t i = 0; i < t->nlkc_q && i < HG_LKC_Q; i++) {
		struct hg_lkc_step *s = &t->lkc_q[i];
		hg_lkc_put(t, s->before, s->after, s->mutex, (uint32_t)s->op);
	}
	t->nlkc_q = 0;
}

/* hg_lockview_step moves the view along the transition (m, op), if the
 * Go side made it before from the lockset ids the view holds. */
static void hg_lockview_step(struct hg_thread *t, uint64_t m, uint32_t op)
{
	if (!t->locks_known)
		return;
	uint64_t key = m << 2 | op;
	struct hg_lkc *e = hg_lkc_find(t, key, t->lk);
	uint64_t after = e ? e->after : hg_lkg_find(key, t->lk);
	if (after != 0 && !e)
		hg_lkc_keep(t, key, t->lk, after);
	if (after != 0)
		t->lk = after;
	else
		t->locks_known = 0;
}

void hg_lockview_lock(struct hg_thread *t, uint64_t m, int read)
{
	t->nheld++;
	int i = hg_held_find(t, m);
	if (i >= 0) {
		t->held_n[i]++; /* held already: the locksets stay */
		return;
	}
	if (t->nheld_tab == HG_HELD) {
		t->held_over = 1;
		t->locks_known = 0;
		return;
	}
	t->held_m[t->nheld_tab] = m;
	t->held_n[t->nheld_tab++] = 1;
	/* with more mutexes held than the table kept, this one may be held
	 * already (a recursive hold the table does not show) */
	if (t->held_over)
		t->locks_known = 0;
	else
		hg_lockview_step(t, m, read ? HG_LOCKSTEP_READ : HG_LOCKSTEP_WRITE);
}

void hg_lockview_unlock(struct hg_thread *t, uint64_t m)
{
	if (t->nheld > 0)
		t->nheld--;
	int i = hg_held_find(t, m);
	if (i < 0) {
		t->locks_known = 0; /* taken before the table saw it, or beyond it */
	} else if (--t->held_n[i] == 0) {
		t->nheld_tab--;
		t->held_m[i] = t->held_m[t->nheld_tab];
		t->held_n[i] = t->held_n[t->nheld_tab];
		if (t->nheld > 0)
			hg_lockview_step(t, m, HG_LOCKSTEP_UNLOCK);
	}
	if (t->nheld == 0) {
		/* no lock held: the empty locksets, whatever the view was */
		t->nheld_tab = 0;
		t->held_over = 0;
		t->lk = 0;
		t->locks_known = 1;
	}
}

/* hg_lockview_sync: the thread's lock events are processed, hg_tstate's locks
 * holds its locksets. A view carried across them must agree (counted,
 * and printed at exit as an internal error: a disagreement is a bug of
 * this file). */
void hg_lockview_sync(struct hg_thread *t)
{
	if (t->tid < 0 || t->tid >= HG_MAX_THREADS)
		return;
	uint64_t held = __atomic_load_n(&hg_tstate[t->tid].locks, __ATOMIC_RELAXED);
	if (t->locks_known && t->lk != held)
		t->lk_mismatch++;
	t->lk = held;
	t->locks_known = 1;
}
