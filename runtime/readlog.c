/* readlog.c: a lock-protected region that only read, published in C.
 *
 * A region's reads go to the reader log at its unlock, so that a later
 * region of another thread that writes them, under the mutex, is ordered
 * after the reader (reverse hand-offs: runtime/detect/readlog.go). That
 * used to be a call into the Go side per region, and a read-mostly
 * program ends most of its regions so: bench/readmostly.c made 80
 * thousand such calls, and took twice as long as with handoff=no.
 *
 * Mostly the call changed one word. The thread's way under the mutex
 * already held what the region read (every variable, once its regions
 * read more than HG_RL_KEYS granules, or the same few again), and the
 * way's segment was the thread's clock as it still was but for the
 * thread's own component, which the way's epoch gives. Then the C side
 * writes the epoch itself and moves the thread to its next segment, as
 * the Go side's tick would (hg_tstate and the call trace's mark). The
 * unlock event says so (HG_LOCK_TICKED), and the Go side ticks its copy
 * of the clock when it processes the event.
 *
 * Both sides must agree on the clock throughout, so this is done only
 * when no buffered event can change the clock on the Go side (go_pending)
 * and the thread took in no other clock since the way was published
 * (joined_at, from cRecord.KnowJoin): the way's segment, a snapshot made
 * at publication, is then the thread's clock still. Wrappers flush before
 * any other call into Go (wrap.h, GO), so the Go side's tick comes before
 * anything else it does for the thread.
 */
#define _GNU_SOURCE
#include "rt_internal.h"

/* the clock bits of a cell epoch (hg_tstate), and of a table epoch */
#define HG_CELL_CLOCK ((1ull << SH_TOUCHED_SHIFT) - 1)
#define HG_WAY_CLOCK ((1ull << 48) - 1)

/* hg_rlway_holds: every read t recorded in its region is among the
 * way's granules (held by the caller). */
static int hg_rlway_holds(const struct hg_rlway *w, const struct hg_thread *t)
{
	uint64_t n = __atomic_load_n(&w->n, __ATOMIC_RELAXED);
	if (n > HG_RL_KEYS)
		return 1; /* HG_RL_ALL: every variable */
	if (t->rec_r_all)
		return 0; /* the region read more than it recorded */
	for (int i = 0; i < t->nrec_r; i++) {
		uint64_t key = (t->rec_r[i] & ~(uint64_t)(SH_GRANULE - 1)) + 1, j = 0;
		while (j < n && __atomic_load_n(&w->keys[j], __ATOMIC_RELAXED) != key)
			j++;
		if (j == n)
			return 0;
	}
	return 1;
}

/* hg_region_quiet: t's region of m read and did nothing else the Go side
 * must see at its end (no write, signal, wait or nested lock; m alone
 * held), and the Go side's clock of t is its epoch. */
static int hg_region_quiet(const struct hg_thread *t, uint64_t m)
{
	return hg_opts.handoff && t->tid >= 0 && !t->go_pending && !t->sig_n && !t->sig_acq && t->recording &&
	       t->region_mutex == m && t->nrec_r > 0 && !t->nrec_w && !t->wrote && !t->signalled && !t->waited &&
	       !t->nnest && t->nheld == 1 && !hg_remote_on();
}

/* hg_way_take: way w of mutex m is t's own, published at a clock after
 * t's last join, and holds the region's reads; it is taken (seq made odd,
 * from *seq) and its epoch returned, else 0. */
static uint64_t hg_way_take(struct hg_rlway *w, const struct hg_thread *t, uint64_t m, uint64_t *seq)
{
	uint64_t s = __atomic_load_n(&w->seq, __ATOMIC_ACQUIRE);
	if ((s & 1) || __atomic_load_n(&w->mutex, __ATOMIC_RELAXED) != m)
		return 0;
	uint64_t e = __atomic_load_n(&w->epoch, __ATOMIC_RELAXED);
	if ((e >> 48) != (uint64_t)t->tid || (e & HG_WAY_CLOCK) <= t->joined_at)
		return 0;
	if (!__atomic_compare_exchange_n(&w->seq, &s, s + 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return 0;
	if (__atomic_load_n(&w->mutex, __ATOMIC_RELAXED) != m || __atomic_load_n(&w->epoch, __ATOMIC_RELAXED) != e ||
	    !hg_rlway_holds(w, t)) {
		__atomic_store_n(&w->seq, s + 2, __ATOMIC_RELEASE); /* changed nothing; readers only look again */
		return 0;
	}
	*seq = s;
	return e;
}

int hg_readlog_refresh(struct hg_thread *t, uint64_t m)
{
	if (!hg_region_quiet(t, m))
		return 0;
	uintptr_t base = __atomic_load_n(&hg_handoff_keys[1], __ATOMIC_ACQUIRE);
	if (!base || base == HG_HANDOFF_IN_HEAP)
		return 0;
	uint64_t self = (uint64_t)t->tid, now = __atomic_load_n(&hg_tstate[self].epoch, __ATOMIC_RELAXED);
	uint64_t clock = now & HG_CELL_CLOCK;
	if (clock >= HG_CELL_CLOCK / 2)
		return 0; /* the cell epoch may have dropped clock bits: the Go side */
	struct hg_rlway *w = (struct hg_rlway *)(base + 64) + hg_hash(m >> 2, hg_handoff_bits[1]) * HG_RL_WAYS;
	for (int j = 0; j < HG_RL_WAYS; j++) {
		uint64_t s;
		if (!hg_way_take(&w[j], t, m, &s))
			continue;
		__atomic_store_n(&w[j].epoch, self << 48 | clock, __ATOMIC_RELAXED);
		__atomic_store_n(&w[j].seq, s + 2, __ATOMIC_RELEASE);
		/* the next segment, as the Go side's tick (detector.go) */
		__atomic_store_n(&hg_tstate[self].epoch, now + 1, __ATOMIC_RELAXED);
		hg_trace_mark_epoch(now + 1);
		t->c_ticked = 1;
		return 1;
	}
	return 0;
}
