// Package shadow holds the race detector's run-time data structures:
// epochs and vector clocks, the thread registry, interned locksets and
// threadsets, and shadow memory (Helgrind+ dissertation ch. 3.4.2, 5.1, 8.3;
// docs/architecture.md decisions 1 and 2). Everything here is safe for concurrent
// use unless a comment says otherwise, and shadow memory lives outside the Go
// heap.
//
// # Happens-before
//
// A thread segment TS_t is the epoch (t, V_t(t)) of thread t's vector clock
// (Epoch, VC). NewSegment(TS_1, ..., TS_n) for thread t joins V_t with the
// VC of each TS_i and then ticks t's own component (Thread.NewSegment); a
// synchronisation object keeps a VC for its TS_cv / TS_b. A previous access
// with epoch e happens before thread t's current segment iff
// V_t.HappensBefore(e). Threads.Create and Threads.Join implement the fork
// and join rules of ch. 5.1 (new thread: parent's VC, own component ticked;
// parent ticks; joiner joins the joined thread's VC and ticks).
//
// # Thread ids
//
// Ids are uint16, 1..65535. An id is reused only when the new thread's
// creator has synchronised with the end of the id's previous thread, and the
// new thread continues the id's clock; otherwise a fresh id is used, and
// Create fails with ErrTooManyThreads when none is left. See Threads.
//
// # Shadow cells
//
// Each 8-byte granule of application memory has a cell of four uint64
// words in Memory (cell.go names their bit fields):
//
//	word 0: state and epoch, opaque here: the runtime packs the msm.State in
//	        the top 4 bits and the epoch below (the 16-bit tid in bits
//	        44-59 and the low 36 bits of the clock), except bits 36-43:
//	        the bytes of the granule touched (split.go)
//	word 1: lockset id (low 32) | threadset id (high 32)   PackSets
//	words 2, 3: the access history for reports (the latest access, and
//	        the latest by another thread): pc, tid, flags, size and the
//	        lockset that guarded it (cell.go)              PackAccess
//
// A cell of all zeros is a never-accessed granule. The runtime holds
// Memory.Lock(addr) while it reads, decides and writes a cell
// (Memory.RangeLocked or LockRange for a multi-granule access), and writes
// word 0 with one 64-bit store (atomic.StoreUint64), so that a fast path
// outside Go may read word 0 without the lock, e.g. to drop an access that
// would change nothing (same state, same segment). Such a fast path must not
// write cells: the stripes are Go mutexes.
//
// Shadow memory is a two-level table: a directory of 2^25 chunk pointers
// (one per 4 MiB of the 47-bit user address space, mmap'd with NORESERVE so
// only the pages in use are backed) and chunks of 2^19 cells (16 MiB of
// address space, mmap'd on first touch and installed with a compare-and-swap;
// never freed). Memory.DirectoryBase gives the fast path the table.
//
// # Join without scanning memory
//
// On join(u) the dissertation removes u from the threadset S_d of every
// shared location d and resets d to an exclusive state when S_d becomes a
// singleton. Here the join is applied to the interned threadsets instead of
// to memory: Threads.Join (and the exit of a detached thread) calls
// Threadsets.Kill(u), which retires every interned set containing u and
// makes it forward to the same set without u. That costs time in the number
// of distinct threadsets containing u, not in the size of memory. The cells
// are fixed lazily, at their next access, by the runtime:
//
//	ts := cell threadset id (word 1, high half)
//	if state is shared (Shared-Read, Shared-Modified, ...) {
//		if c := threadsets.Canon(ts); c != ts {   // one atomic load when live
//			// some thread of S_d has been joined since d was last touched
//			if threadsets.Len(c) <= 1 {
//				// what the eager join would have done: back to the
//				// exclusive state, keeping word 0's epoch of the last
//				// access (if c is {w}, w is the owner; if c is empty,
//				// every thread that touched d is gone and the epoch
//				// decides as usual whether the next access is ordered)
//			} else {
//				ts = c    // and store it back with the new state
//			}
//		}
//	}
//	... then the normal state machine step for this access
//
// Because nothing can touch d between the join and its next access, applying
// the join at that access gives the same state the eager scan would have
// produced; several joins in between compose (Canon follows the forwarding
// chain). Threadsets.Add and Remove accept retired ids and return canonical
// ids, so a step that forgets Canon is still correct, only less precise.
// After Kill(u) the id u may be reused by a new thread; sets built from then
// on are new ids, so the new thread is never confused with the old one in a
// threadset. All of a thread's buffered accesses must be processed before
// it is joined (released).
//
// # Locksets
//
// Locksets interns sorted sets of lock addresses; Thread.Lockset is the id
// of the locks a thread holds; word 1 of a cell holds the candidate lockset
// of a shared location, updated with Locksets.Intersect. Add, Remove and
// Intersect are memoised in lock-free caches, so a lookup in the steady
// state costs a few loads.
package shadow
