/* lockorder.c: which lock acquisitions are news for the lock-order graph.
 *
 * The graph of lock-order inversions (runtime/detect/lockorder.go) has an
 * edge A -> B when a thread acquires B while it holds A, with the call
 * stack of the first such acquisition. A stack can only be taken in the
 * wrapper itself, and backtrace() plus a flush at every nested lock would
 * cost a lock-heavy program dearly; so this file keeps the pairs (held,
 * acquired) seen in the process, and only a lock that makes a new pair is
 * marked (HG_LOCK_ORDER) and flushed at once, the stack following
 * (wrappers.c, hg_lock_event; threads.c, hg_stack_now). A lock taken with
 * nothing else held costs one test of the thread's lock view.
 *
 * The pairs are fingerprints in a table shared by all threads, written
 * with compare-and-swap: two threads that meet one pair at once mark it
 * once. Each entry carries the epoch it was made in; the Go side moves
 * the epoch on when it drops edges (a mutex destroyed or freed: Host's
 * ForgetLockPairs), and so does a forked child, whose detector starts
 * with no graph: entries of an older epoch count as free slots. A probe
 * window full of current entries evicts the first: its pair is news once
 * more later, which costs a flush, not an edge.
 */
#define _GNU_SOURCE
#include "rt_internal.h"

#define HG_LO_BITS 13	/* 8192 entries, 64 KiB */
#define HG_LO_PROBES 8	/* entries a pair may take, from its hash on */
#define HG_LO_FP_BITS 40 /* an entry: epoch << 40 | fingerprint (never 0) */
#define HG_LO_FP_MASK ((1ull << HG_LO_FP_BITS) - 1)

static uint64_t hg_lo_pairs[1u << HG_LO_BITS];
static uint64_t hg_lo_epoch = 1; /* 24 bits of it in an entry */
static int hg_lo_any;		 /* a pair was seen (a destroy need not tell the Go side otherwise) */

/* hg_lo_entry is the entry of the pair (held, m) in epoch epoch: the
 * fingerprint mixes the two unequally, so that (a, b) and (b, a) differ. */
static uint64_t hg_lo_entry(uint64_t held, uint64_t m, uint64_t epoch)
{
	uint64_t h = held * HG_PHI64 ^ (m + 0x632be59bd9b4e019ull) * 0xc2b2ae3d27d4eb4full;
	h ^= h >> 31;
	return (epoch & 0xffffff) << HG_LO_FP_BITS | (h & HG_LO_FP_MASK) | 1;
}

/* hg_lo_claim puts entry in the table; it returns 1 when it was not
 * there (the pair is new in this epoch). */
static int hg_lo_claim(uint64_t entry)
{
	const uint64_t mask = (1u << HG_LO_BITS) - 1;
	uint64_t first = hg_hash(entry, HG_LO_BITS);
	for (uint64_t p = 0; p < HG_LO_PROBES; p++) {
		uint64_t *slot = &hg_lo_pairs[(first + p) & mask];
		uint64_t v = __atomic_load_n(slot, __ATOMIC_RELAXED);
		for (;;) {
			if (v == entry)
				return 0;
			if (v != 0 && v >> HG_LO_FP_BITS == entry >> HG_LO_FP_BITS)
				break; /* another pair of this epoch: the next slot */
			/* empty or stale: take it (v is reloaded on failure) */
			if (__atomic_compare_exchange_n(slot, &v, entry, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
				return 1;
		}
	}
	__atomic_store_n(&hg_lo_pairs[first], entry, __ATOMIC_RELAXED);
	return 1;
}

/* hg_lockorder_new is called before t's lock of m (not a trylock) is
 * buffered, while the lock view still holds the mutexes held before it
 * (lockview.c). It returns 1 when a pair (held, m) is new: the caller
 * marks the event HG_LOCK_ORDER and flushes after it. A recursive lock
 * makes no pair. When the view has lost count of what is held (more
 * mutexes than it keeps), every nested lock is news: the Go side, which
 * knows them all, decides. */
int hg_lockorder_new(struct hg_thread *t, uint64_t m)
{
	for (int i = 0; i < t->nheld_tab; i++)
		if (t->held_m[i] == m)
			return 0;
	if (t->held_over)
		return 1;
	uint64_t epoch = __atomic_load_n(&hg_lo_epoch, __ATOMIC_RELAXED);
	int fresh = 0;
	for (int i = 0; i < t->nheld_tab; i++)
		fresh |= hg_lo_claim(hg_lo_entry(t->held_m[i], m, epoch));
	if (fresh && !__atomic_load_n(&hg_lo_any, __ATOMIC_RELAXED))
		__atomic_store_n(&hg_lo_any, 1, __ATOMIC_RELAXED);
	return fresh;
}

int hg_lockorder_any(void)
{
	return __atomic_load_n(&hg_lo_any, __ATOMIC_RELAXED);
}

void hg_lockorder_forget(void)
{
	__atomic_add_fetch(&hg_lo_epoch, 1, __ATOMIC_RELAXED);
}
