package shadow

import (
	"cmp"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"
)

// This file holds the interning table shared by Locksets and Threadsets.
//
// A set is a sorted slice of distinct members; equal sets get equal ids, so
// set equality is id equality. Ids are dense uint32 indexes into an
// append-only table; id 0 is the empty set. Entries never change after they
// are published (except the forwarding id of a retired threadset), so
// readers need no lock: the table is an atomically published slice snapshot
// of entry pointers, replaced on every insert (the backing array is shared
// between snapshots until it grows). Inserts, and the content -> id index,
// are serialised by one mutex. Results of Add/Remove/Intersect are memoised
// in lock-free direct-mapped caches keyed by the operands, so the steady
// state of a program (the same few locksets and threadsets combined over and
// over) takes no lock at all.

type member interface{ ~uint16 | ~uint64 }

type setEntry[T member] struct {
	members []T // sorted, distinct, immutable
	// fwd is the entry's own id while the set is live. A retired threadset
	// (one that contained a thread that has since gone, see Threadsets.Kill)
	// forwards to the id of the same set without that thread.
	fwd atomic.Uint32
}

type tableSnap[T member] struct{ e []*setEntry[T] }

type setTable[T member] struct {
	snap atomic.Pointer[tableSnap[T]]

	mu       sync.Mutex
	all      []*setEntry[T]    // under mu: the newest snapshot's entries
	index    map[string]uint32 // under mu: content -> id, live sets only
	byMember map[T][]uint32    // under mu, only if retiring: ids containing a member
	retiring bool              // sets may be retired (threadsets)
	elems    int               // under mu: total members stored, for Stats

	addC, remC, isectC opCache

	// onIntern, if set, learns each new set before its id is returned
	// (under mu): Locksets.SetMirror.
	onIntern func(id uint32, members []T)
}

func (t *setTable[T]) init(retiring bool) {
	t.retiring = retiring
	t.index = make(map[string]uint32)
	if retiring {
		t.byMember = make(map[T][]uint32)
	}
	e := &setEntry[T]{}
	t.all = append(make([]*setEntry[T], 0, 1024), e)
	t.index[""] = 0
	t.snap.Store(&tableSnap[T]{e: t.all})
	t.addC.init(14)
	t.remC.init(14)
	t.isectC.init(16)
}

// entry returns the entry of id without locking.
func (t *setTable[T]) entry(id uint32) *setEntry[T] {
	s := t.snap.Load().e
	if uint64(id) < uint64(len(s)) {
		return s[id]
	}
	return t.entrySlow(id)
}

// entrySlow serves an id published after the caller's snapshot load (only
// possible when the id reached the caller without a happens-before edge to
// the insert, e.g. through shadow memory written by another thread).
func (t *setTable[T]) entrySlow(id uint32) *setEntry[T] {
	t.mu.Lock()
	defer t.mu.Unlock()
	if uint64(id) < uint64(len(t.all)) {
		return t.all[id]
	}
	panic(fmt.Sprintf("shadow: invalid set id %d (%d sets)", id, len(t.all)))
}

func keyOf[T member](m []T) []byte {
	if len(m) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(m))), len(m)*int(unsafe.Sizeof(z)))
}

// internLocked returns the id of the set m (sorted, distinct), inserting it
// if needed. m is copied.
func (t *setTable[T]) internLocked(m []T) uint32 {
	if id, ok := t.index[string(keyOf(m))]; ok {
		return id
	}
	n := len(t.all)
	if n >= 1<<32-1 {
		panic("shadow: set table full")
	}
	id := uint32(n)
	e := &setEntry[T]{members: slices.Clone(m)}
	e.fwd.Store(id)
	t.all = append(t.all, e)
	t.snap.Store(&tableSnap[T]{e: t.all})
	t.index[string(keyOf(e.members))] = id
	t.elems += len(m)
	if t.onIntern != nil {
		t.onIntern(id, e.members)
	}
	if t.retiring {
		for _, x := range m {
			l := t.byMember[x]
			if len(l) == cap(l) && len(l) >= 64 {
				l = t.pruneLocked(l)
			}
			t.byMember[x] = append(l, id)
		}
	}
	return id
}

// pruneLocked drops retired ids from a byMember list, so the lists of
// long-lived threads do not keep every set of every thread that has gone.
// Called when a list is about to grow, so the cost is amortised.
func (t *setTable[T]) pruneLocked(l []uint32) []uint32 {
	out := l[:0]
	for _, id := range l {
		if t.all[id].fwd.Load() == id {
			out = append(out, id)
		}
	}
	clear(l[len(out):])
	return out
}

// intern returns the id of m, computed from the sets op1 and op2. If a
// retiring table retired one of the operands since the caller read it, the
// result may mention a thread that has gone, so nothing is inserted and ok
// is false: the caller starts over from the canonical operands.
func (t *setTable[T]) intern(m []T, op1, op2 uint32) (id uint32, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.retiring && (t.all[op1].fwd.Load() != op1 || t.all[op2].fwd.Load() != op2) {
		return 0, false
	}
	return t.internLocked(m), true
}

// canon follows forwarding ids to the live set.
func (t *setTable[T]) canon(id uint32) uint32 {
	for {
		f := t.entry(id).fwd.Load()
		if f == id {
			return id
		}
		id = f
	}
}

// out is what an operation returns for a result r.
func (t *setTable[T]) out(r uint32) uint32 {
	if t.retiring {
		return t.canon(r)
	}
	return r
}

// live returns the entry of the live set that id stands for, and that id.
func (t *setTable[T]) live(id uint32) (*setEntry[T], uint32) {
	e := t.entry(id)
	if t.retiring {
		for {
			f := e.fwd.Load()
			if f == id {
				break
			}
			id = f
			e = t.entry(id)
		}
	}
	return e, id
}

func search[T member](m []T, x T) (int, bool) {
	if len(m) <= 8 {
		for i, y := range m {
			if y >= x {
				return i, y == x
			}
		}
		return len(m), false
	}
	return slices.BinarySearch(m, x)
}

func (t *setTable[T]) add(id uint32, x T) uint32 {
	for {
		e, id2 := t.live(id)
		id = id2
		i, found := search(e.members, x)
		if found {
			return id
		}
		if r, ok := t.addC.get(id, uint64(x)); ok {
			return t.out(r)
		}
		var buf [16]T
		m := append(buf[:0], e.members[:i]...)
		m = append(m, x)
		m = append(m, e.members[i:]...)
		r, ok := t.intern(m, id, id)
		if !ok {
			continue
		}
		t.addC.put(id, uint64(x), r)
		return r
	}
}

func (t *setTable[T]) remove(id uint32, x T) uint32 {
	for {
		e, id2 := t.live(id)
		id = id2
		i, found := search(e.members, x)
		if !found {
			return id
		}
		if len(e.members) == 1 {
			return 0
		}
		if r, ok := t.remC.get(id, uint64(x)); ok {
			return t.out(r)
		}
		var buf [16]T
		m := append(buf[:0], e.members[:i]...)
		m = append(m, e.members[i+1:]...)
		r, ok := t.intern(m, id, id)
		if !ok {
			continue
		}
		t.remC.put(id, uint64(x), r)
		return r
	}
}

func (t *setTable[T]) intersect(a, b uint32) uint32 {
	for {
		if a == b {
			return a
		}
		if a == 0 || b == 0 {
			return 0
		}
		if a > b {
			a, b = b, a
		}
		if r, ok := t.isectC.get(a, uint64(b)); ok {
			return t.out(r)
		}
		ea, a2 := t.live(a)
		eb, b2 := t.live(b)
		if a2 != a || b2 != b {
			a, b = a2, b2
			continue
		}
		var buf [16]T
		m := intersectSorted(buf[:0], ea.members, eb.members)
		var r uint32
		switch {
		case len(m) == len(ea.members):
			r = a
		case len(m) == len(eb.members):
			r = b
		case len(m) == 0:
			r = 0
		default:
			var ok bool
			r, ok = t.intern(m, a, b)
			if !ok {
				continue
			}
		}
		t.isectC.put(a, uint64(b), r)
		return r
	}
}

func intersectSorted[T member](dst, a, b []T) []T {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch cmp.Compare(a[i], b[j]) {
		case -1:
			i++
		case 1:
			j++
		default:
			dst = append(dst, a[i])
			i++
			j++
		}
	}
	return dst
}

// retire (threadsets only) removes x from every live set that contains it:
// each such set stops being found by content and forwards to the set
// without x. Under mu.
func (t *setTable[T]) retireLocked(x T) {
	ids := t.byMember[x]
	delete(t.byMember, x)
	var buf [16]T
	for _, id := range ids {
		e := t.all[id]
		if e.fwd.Load() != id {
			continue
		}
		delete(t.index, string(keyOf(e.members)))
		i, _ := search(e.members, x)
		m := append(buf[:0], e.members[:i]...)
		m = append(m, e.members[i+1:]...)
		e.fwd.Store(t.internLocked(m))
	}
}

func (t *setTable[T]) size() (sets, elems int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.all), t.elems
}

// opCache is a lock-free direct-mapped memo of (set id, operand) -> result
// id. Slots hold pointers to immutable records, so a reader sees either a
// whole record or none; a record that does not match the key is a miss.
// It starts with 1<<opCacheMinBits slots and doubles, up to 1<<maxBits,
// each time it has taken as many records as it has slots: most programs
// use a few sets, and three caches of full size per table were 1.5 MB of
// every program's heap. Records are dropped when it grows (misses then
// compute them again).
type opCache struct {
	cur     atomic.Pointer[cacheSlots]
	maxBits uint
	puts    atomic.Uint64 // records taken since the last growth
}

type cacheSlots struct {
	slots []atomic.Pointer[cacheEnt]
	shift uint
}

type cacheEnt struct {
	x    uint64
	a, r uint32
}

const opCacheMinBits = 8

func (c *opCache) init(maxBits uint) {
	c.maxBits = maxBits
	c.cur.Store(newCacheSlots(min(opCacheMinBits, maxBits)))
}

func newCacheSlots(bits uint) *cacheSlots {
	return &cacheSlots{slots: make([]atomic.Pointer[cacheEnt], 1<<bits), shift: 64 - bits}
}

func (cs *cacheSlots) slot(a uint32, x uint64) *atomic.Pointer[cacheEnt] {
	h := (x*0x9E3779B97F4A7C15 ^ uint64(a)) * 0xC2B2AE3D27D4EB4F
	return &cs.slots[h>>cs.shift]
}

func (c *opCache) get(a uint32, x uint64) (uint32, bool) {
	if p := c.cur.Load().slot(a, x).Load(); p != nil && p.a == a && p.x == x {
		return p.r, true
	}
	return 0, false
}

func (c *opCache) put(a uint32, x uint64, r uint32) {
	cs := c.cur.Load()
	cs.slot(a, x).Store(&cacheEnt{x: x, a: a, r: r})
	if n := len(cs.slots); n < 1<<c.maxBits && c.puts.Add(1) >= uint64(n) { // no shared write once at its bound
		// one of the threads that see it full replaces it
		if c.cur.CompareAndSwap(cs, newCacheSlots(64-cs.shift+1)) {
			c.puts.Store(0)
		}
	}
}
