package shadow

import "sync/atomic"

// Locksets interns sets of lock addresses. Id 0 is the empty set; equal sets
// have equal ids. All methods are safe for concurrent use; Members, Len,
// Contains and cached Add/Remove/Intersect results take no lock.
type Locksets struct {
	t setTable[uint64]
}

// NewLocksets returns a table holding only the empty set.
func NewLocksets() *Locksets {
	l := &Locksets{}
	l.t.init(false)
	return l
}

// Add returns the id of set id with lock added.
func (l *Locksets) Add(id uint32, lock uint64) uint32 { return l.t.add(id, lock) }

// Remove returns the id of set id without lock.
func (l *Locksets) Remove(id uint32, lock uint64) uint32 { return l.t.remove(id, lock) }

// Intersect returns the id of the intersection of sets a and b (memoised).
func (l *Locksets) Intersect(a, b uint32) uint32 { return l.t.intersect(a, b) }

// Members returns the locks of set id in increasing order. The slice is
// shared: do not modify it.
func (l *Locksets) Members(id uint32) []uint64 { return l.t.entry(id).members }

// Len is the number of locks in set id.
func (l *Locksets) Len(id uint32) int { return len(l.t.entry(id).members) }

// Contains reports whether lock is in set id.
func (l *Locksets) Contains(id uint32, lock uint64) bool {
	_, ok := search(l.t.entry(id).members, lock)
	return ok
}

// Make returns the id of the set of the given locks (any order, duplicates
// allowed).
func (l *Locksets) Make(locks ...uint64) uint32 {
	var id uint32
	for _, x := range locks {
		id = l.Add(id, x)
	}
	return id
}

// MirrorWords is the number of words a lockset takes in a mirror
// (SetMirror): its number of locks, then up to MirrorWords-1 locks.
const MirrorWords = 4

// SetMirror has the table copy every set it interns from now on into m,
// MirrorWords words at MirrorWords*id: the locks first, then, last and
// atomically, their number. Sets of more locks than fit, and ids past
// the end of m, are not copied (their number stays 0). The runtime's C
// fast path reads the copy without a lock to tell, without the Go side,
// whether one lockset is part of another (runtime/fastpath.c,
// hg_lockset_within). Call it before any set but the empty one exists.
func (l *Locksets) SetMirror(m []uint64) {
	l.t.mu.Lock()
	defer l.t.mu.Unlock()
	l.t.onIntern = func(id uint32, locks []uint64) {
		at := uint64(id) * MirrorWords
		if len(locks) >= MirrorWords || at+MirrorWords > uint64(len(m)) {
			return
		}
		copy(m[at+1:], locks)
		atomic.StoreUint64(&m[at], uint64(len(locks)))
	}
}

// Count returns the number of distinct sets interned so far (including the
// empty set) and the total number of members stored.
func (l *Locksets) Count() (sets, members int) { return l.t.size() }
