package shadow

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

// Count returns the number of distinct sets interned so far (including the
// empty set) and the total number of members stored.
func (l *Locksets) Count() (sets, members int) { return l.t.size() }
