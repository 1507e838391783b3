// Package msm implements the two memory state machines of Helgrind+
// (A. Jannesari, "Dynamic Race Detection in Parallel Programs", KIT 2010,
// chapter 5): MSM-long (eight states, section 5.2.3, figure 5.1) and
// MSM-short (six states, section 5.2.6, figure 5.4), plus the reserved Spin
// state of the shadow words (section 8.3).
//
// The package is pure logic. Every memory location d has a Cell: its state,
// the thread segment TS_d of the prior access, the candidate lockset C_d and
// the threadset S_d. Step applies one read or write of thread t (its segment
// TS_t and held lockset L_t) to a cell and says whether that access moved the
// cell into Race. Questions about segments, locksets and threadsets are
// answered by an Env, which the runtime implements with vector clocks and
// interned sets. Lock operations create no happens-before relation: they only
// change L_t (section 5.1.1); fork/join, signal/wait and barriers create
// happens-before edges (section 5.1.2). That is the Env's business, not this
// package's.
//
// # Notation
//
// "hb" below means Env.HappensBefore(TS_d, access), i.e. TS_d ->hb TS_t,
// which holds reflexively and for earlier segments of the same thread. The
// dissertation's "TS_d || TS_t" is taken to be its negation: TS_d is always
// in the past, so TS_t ->hb TS_d cannot hold. The happens-before test is
// only asked for where the pseudo-code needs it (no test in Shared-Read and
// Shared-Modified1 of MSM-long, in Shared-Read reads of MSM-short, nor in the
// Shared-Modified states while C_d stays non-empty).
//
// # Cell fields per state
//
//   - New: nothing (TS, Locks, Threads are zero).
//   - Exclusive-Read, Exclusive-Write: TS_d, and in Locks the owner's
//     lockset E_d (choice 13). Threads is cleared to 0 on entry.
//   - Exclusive-ReadWrite (long): TS_d and S_d; Locks cleared on entry
//     (choice 13 does not apply: the state is already shared).
//   - Shared-Read, Shared-Modified1 (long): C_d and S_d. TS_d is not used by
//     MSM-long there (its shadow word stores no segment in these states,
//     section 8.3.1); the field keeps whatever it held.
//   - Shared-Read, Shared-Modified (short), Shared-Modified2 (long): TS_d,
//     C_d and S_d.
//   - Race: absorbing. The cell keeps the fields it had before the racing
//     access (so a caller can still name TS_d, the segment of the prior
//     access, in a report). Only the access that enters Race returns
//     race=true; later accesses return the cell unchanged and race=false.
//   - Spin: reserved for spinning-read-loop handling; absorbing, never
//     reports, the cell is returned unchanged.
//
// Fields the pseudo-code does not assign keep their value, except for the
// clearing described above.
//
// # Threadset S_d
//
// S_d is "the set of threads accessing d" while d is shared (section 5.1.2,
// join). It is maintained as follows:
//
//   - Entering a shared state from an exclusive state (Exclusive-Read,
//     Exclusive-Write, and in MSM-long Exclusive-ReadWrite -> Shared-Modified2)
//     sets S_d = {t, threadof(TS_d)} with the TS_d of before the access.
//   - Every other access that leaves the cell in a state carrying a threadset
//     (Shared-Read, Shared-Modified, Shared-Modified1, Shared-Modified2,
//     Exclusive-ReadWrite) adds t: S_d = S_d ∪ {t}.
//   - Exclusive-Read/Exclusive-Write/New carry none (Threads = 0).
//
// At join(u) the runtime removes u from S_d of every cell with a threadset
// (HasThreadset) and calls OnJoin, which implements "if S_d is singleton then
// reset d to exclusive state" (section 5.1.2).
//
// # Choices where the dissertation is ambiguous
//
//  1. MSM-short, Shared-Read, write. The pseudo-code says "if TS_d ->hb TS_t
//     then Shared-Modified else Race"; the prose says a write enters
//     Shared-Modified "except when this write is in parallel with the TS_d
//     stored in Exclusive-Read, and no lock protects it". We follow the
//     prose, reading "no lock protects it" as C_d ∩ L_t = ∅ (C_d is what the
//     dissertation means by the locks protecting d in shared states): with
//     C' = C_d ∩ L_t, hb -> Shared-Modified; not hb and C' ≠ ∅ ->
//     Shared-Modified; otherwise Race. Reason: the literal pseudo-code reports
//     a race on data that every thread accesses under one lock (A and B read
//     under l, then C writes under l), which the exclusive states explicitly
//     avoid with their "|| ∧ L_t ≠ ∅ -> Shared-Modified" edge; table 5.3 is
//     consistent with both readings (see 3). Price: the race of figure 3.7
//     (a write under a lock after an unlocked initialisation) is missed by
//     MSM-short too, the same limitation section 5.3 states for figure 5.6.
//  2. MSM-short, Shared-Read -> Shared-Modified: TS_d = TS_t (the write that
//     made d modified). The pseudo-code does not say. Entering
//     Shared-Modified from an exclusive state does set TS_d = TS_t, and the
//     later hb test in Shared-Modified (when C_d becomes empty) should ask
//     whether the new access is ordered after that write, not after an old
//     read. Table 5.3 gives the same result either way; keeping the old TS_d
//     would miss a write-read race when the reader is ordered after the old
//     read but not after the write.
//  3. Exclusive-Read, parallel read -> Shared-Read keeps TS_d (both machines).
//     MSM-short's pseudo-code says so explicitly and its Shared-Read write
//     test uses it; MSM-long's text says the segment "is discarded" but its
//     Shared-Read never looks at it, so keeping it is harmless. This is what
//     makes table 5.3's row "main(): 17 Write Sh-R -> Sh-Mod" hold: TS_d is
//     main's own read at line 9, so TS_d ->hb TS_t (the table's "no" in the
//     hb column refers to the worker's read, which is not tracked).
//  4. Exclusive-Read, read with TS_d ->hb TS_t: TS_d = TS_t (both machines).
//     The pseudo-code only says "set state to Exclusive-Read"; the
//     definition of the exclusive states says the ownership "is transferred
//     from one thread segment to another", and Exclusive-Write (any access)
//     and Exclusive-ReadWrite (a write) update TS_d on the same condition.
//     Keeping the old
//     TS_d would miss a write by a thread ordered after the old segment but
//     parallel to the newer read.
//  5. MSM-long, Exclusive-ReadWrite, read with hb -> Shared-Read (as the
//     pseudo-code and the sentence "When a read operation happens and there
//     is a hb-relation, we return to Shared-Read" say), not "remain in this
//     state" (the general sentence before it). Shared-Read needs a lockset;
//     as on every other entry into Shared-Read, C_d = L_t. S_d gains t.
//  6. MSM-long, entering Exclusive-ReadWrite from Shared-Read,
//     Shared-Modified1 or Shared-Modified2: TS_d = TS_t. The pseudo-code of
//     Shared-Read/Shared-Modified1 does not assign TS_d, but those states
//     store no segment (section 8.3.1) and Exclusive-ReadWrite "tracks the
//     thread segment identifier corresponding to the most recent access";
//     Shared-Modified2 assigns it explicitly. Tables 5.1 and 5.2 agree.
//  7. S_d = {t, threadof(TS_d)} uses TS_d from before the access: MSM-short's
//     Exclusive-Write/Exclusive-Read pseudo-code assigns TS_d = TS_t first,
//     which read literally would always give {t}.
//  8. S_d gains t on every access in a state with a threadset (see
//     "Threadset S_d"); the pseudo-code only writes it in Shared-Read. Without
//     it a third thread touching a Shared-Modified location would be absent
//     from S_d and a join could wrongly make d exclusive.
//  9. Table 5.1 (figure 5.2) is not consistent with the pseudo-code: after
//     the worker's unlocked read at line 29 (C_d = {} by the table's own
//     row), main's read at line 18 under lock 1 shows C_d = {1}, which
//     C_d ∩ L_t cannot give. We follow the pseudo-code (C_d = C_d ∩ L_t).
//     Replaying figure 5.2 then gives Exclusive-ReadWrite instead of
//     Shared-Modified1 at line 18 (write) and Shared-Read instead of
//     Exclusive-ReadWrite at line 21 (read); the outcome is the one the
//     table states: no report until the worker's write at line 37, which
//     enters Race (two unsynchronized accesses). If the worker held lock 1
//     at line 29, every state of the printed table is reproduced; the tests
//     replay both.
//  10. MSM-long, Exclusive-ReadWrite, parallel read -> Shared-Modified2 keeps
//     TS_d (the pseudo-code assigns TS_d only for the parallel write), so
//     Shared-Modified2 keeps testing against the access that owned
//     Exclusive-ReadWrite (typically the write that made d modified), not
//     against the parallel read.
//  11. "L_t ≠ ∅" in the exclusive states means the thread holds any lock;
//     no candidate set exists there yet.
//  12. MSM-short, Shared-Modified, a write under a common lock sets TS_d =
//     TS_t (the pseudo-code keeps TS_d while C_d stays non-empty). TS_d is
//     then the latest write, so an unlocked read that the writes do not
//     happen before is a race, even when the location entered
//     Shared-Modified through that reader's own access (a single writer
//     under the lock, a reader that once also read without it).
//  13. The exclusive states remember the owner's lockset E_d: the
//     intersection of the locksets of the owner's accesses in its segment
//     TS_d (AnyLocks before the first). An access ordered after TS_d by
//     another segment starts again from its own lockset; one in the same
//     segment intersects. A parallel access meets E_d, not only its own
//     lockset: leaving an exclusive state, C_d = E_d ∩ L_t, and a race is
//     called when that is empty (a write involved). The dissertation keeps
//     no lockset there and so checks only the second access's locks: an
//     unlocked read followed by a parallel locked write, or two writes under
//     two different mutexes, entered Shared-Modified with C_d = L_t and were
//     missed, while the same two accesses in the other order were reported
//     (figures 3.7 and 5.6 are of this kind; section 5.3 names the
//     limitation). With E_d the verdict on two parallel accesses no longer
//     depends on which is processed first. E_d covers one segment, not all
//     of the owner's accesses: a parallel access is compared with what the
//     owner did since its last synchronisation, so an unlocked
//     initialisation followed by thread creation and locked use does not
//     count against the threads created.
//
// # Join
//
// OnJoin implements the join rule; see its documentation. A cell in
// Shared-Read becomes Exclusive-Read; a cell in a modified state
// (Shared-Modified, Shared-Modified1, Shared-Modified2, Exclusive-ReadWrite)
// becomes Exclusive-Write, since its last access may have been a write and
// Exclusive-Write is the stricter of the two for the next access.
package msm

import "strconv"

// State is the state of a memory location in one of the machines.
type State uint8

// The states of both machines. Each machine uses a subset; see Machine.Has.
const (
	New             State = iota
	ExclRead              // Exclusive-Read
	ExclWrite             // Exclusive-Write
	ExclReadWrite         // Exclusive-ReadWrite, MSM-long only
	SharedRead            // Shared-Read
	SharedModified        // Shared-Modified, MSM-short only
	SharedModified1       // Shared-Modified1, MSM-long only
	SharedModified2       // Shared-Modified2, MSM-long only
	Race                  // a race was reported; absorbing
	Spin                  // spinning-read-loop variable; absorbing, never reports
)

var stateNames = [...]string{
	New:             "New",
	ExclRead:        "Exclusive-Read",
	ExclWrite:       "Exclusive-Write",
	ExclReadWrite:   "Exclusive-ReadWrite",
	SharedRead:      "Shared-Read",
	SharedModified:  "Shared-Modified",
	SharedModified1: "Shared-Modified1",
	SharedModified2: "Shared-Modified2",
	Race:            "Race",
	Spin:            "Spin",
}

// String returns the state's name as the dissertation writes it.
func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "State(" + strconv.Itoa(int(s)) + ")"
}

// HasThreadset reports whether a cell in state s carries a threadset S_d
// (and so must be visited at thread join).
func HasThreadset(s State) bool {
	switch s {
	case SharedRead, SharedModified, SharedModified1, SharedModified2, ExclReadWrite:
		return true
	}
	return false
}

// Machine selects a memory state machine.
type Machine uint8

const (
	Short Machine = iota // MSM-short, for short-running programs and unit tests
	Long                 // MSM-long, for long-running programs
)

// String returns "MSM-short" or "MSM-long".
func (m Machine) String() string {
	switch m {
	case Short:
		return "MSM-short"
	case Long:
		return "MSM-long"
	}
	return "Machine(" + strconv.Itoa(int(m)) + ")"
}

// Has reports whether state s belongs to machine m.
func (m Machine) Has(s State) bool {
	switch s {
	case New, ExclRead, ExclWrite, SharedRead, Race, Spin:
		return m == Short || m == Long
	case SharedModified:
		return m == Short
	case ExclReadWrite, SharedModified1, SharedModified2:
		return m == Long
	}
	return false
}

// Epoch identifies a thread segment TS. It is opaque to this package.
type Epoch uint64

// ThreadID identifies a thread.
type ThreadID uint32

// LocksetID identifies an interned lockset; 0 is the empty lockset.
type LocksetID uint32

// ThreadsetID identifies an interned threadset.
type ThreadsetID uint32

// Cell is the state of one memory location d.
type Cell struct {
	State   State
	TS      Epoch       // TS_d
	Locks   LocksetID   // C_d
	Threads ThreadsetID // S_d
}

// Access is one read or write by the current thread t.
type Access struct {
	Write  bool
	Thread ThreadID
	TS     Epoch     // TS_t, the current segment of t
	Locks  LocksetID // L_t
}

// Env answers the questions the machines ask. The runtime implements it
// with vector clocks and interned sets.
type Env interface {
	// HappensBefore reports TS_d ->hb TS_t, where TS_t is cur.TS. It must
	// be true when prior is cur.TS or an earlier segment of the same thread.
	HappensBefore(prior Epoch, cur Access) bool
	// Intersect returns a ∩ b.
	Intersect(a, b LocksetID) LocksetID
	// ThreadOf returns the thread a segment belongs to.
	ThreadOf(e Epoch) ThreadID
	// Pair returns the threadset {a, b}.
	Pair(a, b ThreadID) ThreadsetID
	// AddThread returns s ∪ {t}.
	AddThread(s ThreadsetID, t ThreadID) ThreadsetID
}

// Step applies one access to a cell and returns the new cell. race is true
// when this access moved the cell into Race; a cell already in Race (or in
// Spin) is returned unchanged with race=false. Step panics if m is not a
// known machine or c.State does not belong to m (a programming error of the
// caller: cells are never shared between machines).
func Step(m Machine, c Cell, a Access, env Env) (next Cell, race bool) {
	if !m.Has(c.State) {
		panic("msm: state " + c.State.String() + " is not a state of " + m.String())
	}
	if c.State == Race || c.State == Spin {
		return c, false
	}
	if m == Short {
		return stepShort(c, a, env)
	}
	return stepLong(c, a, env)
}

// OnJoin applies the join rule of section 5.1.2 to one cell.
//
// Contract: after thread t joined thread u, the runtime visits every cell c
// with HasThreadset(c.State), computes remaining = S_d \ {u} and calls
// OnJoin(c, remaining, single, survivor), where single reports that
// remaining holds exactly one thread s and survivor is the current segment
// of s (when s is the joining thread t, its segment after the join, which
// the join made hb-after everything u did).
//
//   - single == false: the cell keeps its state; Threads = remaining.
//   - single == true: Shared-Read becomes Exclusive-Read; Shared-Modified,
//     Shared-Modified1, Shared-Modified2 and Exclusive-ReadWrite become
//     Exclusive-Write; TS = survivor; Locks = AnyLocks (the survivor has
//     made no access in its segment yet, choice 13); Threads is cleared.
//   - Cells without a threadset (New, exclusive states, Race, Spin) are
//     returned unchanged.
//
// Note: the dissertation resets d whenever S_d becomes a singleton. That is
// only guaranteed sound when the surviving thread is the joining thread;
// if s is another thread, s need not be ordered after u's last access, and
// the reset can hide a race between u and s. A runtime that prefers
// soundness to the dissertation's behaviour passes single=false in that
// case.
func OnJoin(c Cell, remaining ThreadsetID, single bool, survivor Epoch) Cell {
	if !HasThreadset(c.State) {
		return c
	}
	if !single {
		c.Threads = remaining
		return c
	}
	s := ExclWrite
	if c.State == SharedRead {
		s = ExclRead
	}
	return Cell{State: s, TS: survivor, Locks: AnyLocks}
}

// AnyLocks is E_d of an exclusive cell whose owner has made no access in
// its segment yet (choice 13): the intersection of no locksets, which
// leaves any lockset it meets as it is. It is never a thread's lockset.
const AnyLocks LocksetID = ^LocksetID(0)

// Meet is a ∩ b, where either may be AnyLocks.
func Meet(env Env, a, b LocksetID) LocksetID {
	switch {
	case a == AnyLocks:
		return b
	case b == AnyLocks:
		return a
	}
	return env.Intersect(a, b)
}

// own returns the exclusive cell after access a, made by the owner or
// ordered after it (choice 13): in the owner's segment E_d ∩ L_t, else L_t.
func own(c Cell, a Access, env Env) Cell {
	next := exclusiveFor(a)
	next.Locks = a.Locks
	if c.TS == a.TS {
		next.Locks = Meet(env, c.Locks, a.Locks)
	}
	return next
}

// exclusive returns a cell in an exclusive state (Exclusive-Read or
// Exclusive-Write) owned by segment ts.
func exclusive(s State, ts Epoch) Cell {
	return Cell{State: s, TS: ts}
}

// exclusiveFor returns the exclusive cell for access a: Exclusive-Write
// after a write, Exclusive-Read after a read.
func exclusiveFor(a Access) Cell {
	if a.Write {
		return exclusive(ExclWrite, a.TS)
	}
	return exclusive(ExclRead, a.TS)
}

// race returns c moved into Race, keeping its other fields.
func race(c Cell) (Cell, bool) {
	c.State = Race
	return c, true
}

// share returns the cell entering shared state s from an exclusive state
// (rule "C_d ← L_t, S_d ← {t, threadof(TS_d)}", choice 7, with C_d = E_d ∩
// L_t by choice 13: locks): ts is the TS_d the new state stores.
func share(s State, c Cell, a Access, ts Epoch, locks LocksetID, env Env) Cell {
	return Cell{State: s, TS: ts, Locks: locks, Threads: env.Pair(a.Thread, env.ThreadOf(c.TS))}
}
