package shadow

import "sync/atomic"

// Threadsets interns sets of thread ids (the S_d of the dissertation). Id 0
// is the empty set; equal live sets have equal ids. All methods are safe for
// concurrent use; Members, Len, Contains, Canon and cached Single/Add/Remove
// results take no lock.
//
// A set can be retired: Kill(u), called when thread u has gone (joined, or
// detached and exited), retires every set that contains u. A retired id
// keeps its members (for reports) but forwards to the id of the same set
// without u; Canon follows the forwarding. Add and Remove accept retired ids
// and work on (and return) canonical ids. See the package documentation for
// how the runtime applies a join lazily with Canon.
type Threadsets struct {
	t      setTable[uint16]
	single [1 << 16]atomic.Uint32 // {t} -> id, 0 = not known yet
	gen    atomic.Uint32          // Generation - 1
}

// Many stands for any set of more than MaxMembers threads. It is never
// retired (a join does not bring it back to one thread: the join rule does
// not apply to locations many threads used; the state machines' happens-
// before test still returns them to an exclusive state), and adding to or
// removing from it gives Many. Capping the sets keeps Kill's cost bounded
// when thousands of threads touch the same data: each would otherwise be
// a member of thousands of interned sets of thousands of members.
const (
	Many       = ^uint32(0)
	MaxMembers = 16
)

// NewThreadsets returns a table holding only the empty set.
func NewThreadsets() *Threadsets {
	s := &Threadsets{}
	s.t.init(true)
	return s
}

// Single returns the id of {t}.
func (s *Threadsets) Single(t uint16) uint32 {
	if id := s.single[t].Load(); id != 0 {
		return id
	}
	s.t.mu.Lock()
	defer s.t.mu.Unlock()
	id := s.t.internLocked([]uint16{t})
	s.single[t].Store(id)
	return id
}

// Pair returns the id of {a, b} ({a} if a == b).
func (s *Threadsets) Pair(a, b uint16) uint32 { return s.Add(s.Single(a), b) }

// Add returns the canonical id of (the canonical set of) id with t added,
// or Many.
func (s *Threadsets) Add(id uint32, t uint16) uint32 {
	if id == Many {
		return Many
	}
	if s.Len(s.Canon(id)) >= MaxMembers && !s.Contains(s.Canon(id), t) {
		return Many
	}
	return s.t.add(id, t)
}

// Remove returns the canonical id of (the canonical set of) id without t.
func (s *Threadsets) Remove(id uint32, t uint16) uint32 {
	if id == Many {
		return Many
	}
	return s.t.remove(id, t)
}

// Members returns the threads of set id (retired or not) in increasing
// order, nil for Many. The slice is shared: do not modify it.
func (s *Threadsets) Members(id uint32) []uint16 {
	if id == Many {
		return nil
	}
	return s.t.entry(id).members
}

// Len is the number of threads in set id (retired or not); more than
// MaxMembers for Many.
func (s *Threadsets) Len(id uint32) int {
	if id == Many {
		return MaxMembers + 1
	}
	return len(s.t.entry(id).members)
}

// Contains reports whether t is in set id (retired or not); always for
// Many.
func (s *Threadsets) Contains(id uint32, t uint16) bool {
	if id == Many {
		return true
	}
	_, ok := search(s.t.entry(id).members, t)
	return ok
}

// Canon returns the live set that id stands for: id itself unless some of
// its threads have been killed since, in which case the id of the set
// without them. It costs one atomic load when id is live.
func (s *Threadsets) Canon(id uint32) uint32 {
	if id == Many {
		return Many
	}
	return s.t.canon(id)
}

// Retired reports whether id is no longer canonical (never for Many).
func (s *Threadsets) Retired(id uint32) bool {
	return id != Many && s.t.entry(id).fwd.Load() != id
}

// Kill retires every set containing t, making each forward to the same set
// without t; it is the "S_d <- S_d \ {u} for every d" step of join(u),
// applied to the interned sets instead of to memory. It costs time in the
// number of sets that contain t, never in the size of shadow memory. After
// Kill(t), t may be given to a new thread: sets built from then on that
// contain t are new ids and mean the new thread. Threads.Release calls it.
func (s *Threadsets) Kill(t uint16) {
	s.t.mu.Lock()
	defer s.t.mu.Unlock()
	s.single[t].Store(0)
	s.t.retireLocked(t)
	s.gen.Add(1)
}

// Generation counts the calls of Kill, from 1: an id found canonical while
// the generation was g is still canonical while it is g. (A cache of
// canonical ids tagged with the generation read before it looked them up
// needs no other invalidation.)
func (s *Threadsets) Generation() uint32 { return s.gen.Load() + 1 }

// Count returns the number of ids handed out so far (including the empty
// set and retired sets) and the total number of members stored.
func (s *Threadsets) Count() (sets, members int) { return s.t.size() }
