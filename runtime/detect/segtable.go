package detect

import (
	"cmp"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"

	"hgrewrite/shadow"
)

// segTable maps variables to published segments: the writers' side of
// the write/read relation and of lock hand-offs (wrSegs; the readers'
// side is kept by mutex, readLog). It is set-associative:
// a variable's key picks a slot, whose ways hold up to segWays entries,
// read without locks (every access inside a lock-protected region looks
// here). Nothing published is lost: when a slot is full, its least
// recently written entry is folded into the table's overflow segment,
// which stands for every variable evicted. A look-up that finds no entry
// of its own takes the overflow; that may order a thread after a segment
// that published another variable (a race missed, between accesses
// further apart than the table reaches, in a program that keeps more
// variables in flight under locks than it holds), never the other way
// round (a hand-off lost and reported as a race).
type segTable struct {
	// slots is allocated by the first put: a program that never
	// publishes under a lock (or waits on a condition) does not pay
	// for the table's megabytes
	slots atomic.Pointer[[]segSlot]
	alloc sync.Once
	bits  uint
	over  overflow // the evicted entries folded together
	// published is told where the table's keys are, once allocated
	published func(keys uintptr)
	// snapAt is the clock of the ways the C side wrote for thread tid at
	// its clock `clock` (slotMeta.cmade; Detector.snapAt), or have when
	// it is that
	snapAt func(tid uint16, clock uint64, have *shadow.VC) *shadow.VC
}

const segWays = 8

// segSlot is a slot of the table. Its ways' keys and epochs, and its
// meta (the writers' lock and what the C side writes besides), live
// outside the Go heap when they can (handoffMemory, segSlotMem), where
// the C fast path reads them, and writes them when it publishes a
// region itself (runtime/regionpub.c). A way's key and its segment's
// epoch share two cache lines, so that a look-up of a variable nobody
// published, or by a thread that already knows its segment, reads
// nothing else. The rest of each way's segment is kept in place (refs):
// a lock-heavy program publishes a segment per region and keeps tens of
// thousands of them in the table, which as objects of their own took
// more memory than the table (bench/locks.c: 3 of the Go side's 5.3 MB
// live). A slot's refs are allocated by its first put from the Go side:
// the collector scans them, and a program that publishes a few
// variables would otherwise keep them all resident (2 MB).
type segSlot struct {
	ways *[segWays]segWay
	meta *slotMeta
	refs atomic.Pointer[segRefs]
}

type segWay struct {
	key   atomic.Uint64 // 0: free
	epoch atomic.Uint64 // of the segment (shadow.MakeEpoch)
}

// slotMeta is a slot's writers' lock and the part of its ways' segments
// the C side can write (struct hg_wslot). A writer, the Go side's put or
// the C side's, takes the slot by making seq odd and gives it back by
// making it even again; a reader that reads seq even, the way, and the
// same seq again read one segment (load). A way whose bit is set in
// cmade was written by the C side for a region of the way's thread: its
// clock is in that thread's snapshot ring, found by the way's epoch
// (snapAt), until the Go side puts it in the way's refs and clears the
// bit (materialize, at a call of the thread's).
type slotMeta struct {
	seq   seqWord
	cmade atomic.Uint64
	mutex [segWays]atomic.Uint64 // each way's first mutex (0: none)
	// puts counts the slot's writes; used is when each way was written
	// last, in puts (evict takes the oldest). Under the lock.
	used [segWays]uint32
	puts uint32
	_    uint32
	// refs is the address of the slot's segRefs (segSlot.refs, which
	// keeps them), where the C side reads a way's clock snapshot to see
	// whether the overflow covers it (runtime/regionpub.c,
	// hg_covered_way); 0 until made.
	refs atomic.Uintptr
}

// segSlotMem is a slot as it is laid out for the C side (struct
// hg_wslot, 256 bytes): the ways' two cache lines, then the meta's.
type segSlotMem struct {
	ways [segWays]segWay
	meta slotMeta
}

// seqWord is a writers' lock that readers check without taking it: odd
// while a writer (the Go side, or the C side for a way it publishes
// into) holds it. A reader that reads it even, then what it guards, then
// the same value again, read a consistent state (slotMeta, rlWay).
type seqWord struct{ atomic.Uint64 }

// lock takes the word from other writers: the C side's may hold it for
// a few instructions, on a thread that may be descheduled.
func (q *seqWord) lock() {
	for spins := 0; ; spins++ {
		if s := q.Load(); s&1 == 0 && q.CompareAndSwap(s, s+1) {
			return
		}
		backOff(spins)
	}
}

func (q *seqWord) unlock() { q.Add(1) }

// stable is the word's value once no writer holds it.
func (q *seqWord) stable() uint64 {
	for spins := 0; ; spins++ {
		if s := q.Load(); s&1 == 0 {
			return s
		}
		backOff(spins)
	}
}

// backOff is the spins-th round of a wait for a seqWord's writer. Most
// writers finish within a few rounds; a writer on a thread of the
// program that the system descheduled (in the C side's few stores)
// needs the processor: every 64 rounds the waiter gives it up with a
// raw sched_yield, which leaves the Go scheduler alone.
//
// A writer on the Go side needs a P to finish, and the Go scheduler can
// preempt it while it holds the word; a waiter that only yields the
// processor keeps its P. Once (bench/locks.c, 2026-11-27, one run in
// some hundreds) a program's two threads were found at 100% for 11
// minutes: one spinning here on a reader-log way, the other preempted
// in Go and parked for a P, the collector's mark worker on the second
// P waiting to suspend the spinner. Why the spinner was never preempted
// is not established. Past about a millisecond of yields, the waiter
// now sleeps in an ordinary system call, where the scheduler's monitor
// hands its P to waiting work and the collector can suspend it.
//
// runtime.Gosched, made in every round at first, hands the P from M to
// M (the goroutine is locked to its thread); a program of 2,000
// short-lived threads in waves hung twice in about 2,000 runs with it,
// a collection waiting to stop the world while callbacks' Ms were
// parked for a P (perhaps the same livelock).
func backOff(spins int) {
	switch {
	case spins%64 != 63:
	case spins < 64<<10:
		unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
	default:
		unix.Nanosleep(&unix.Timespec{Nsec: 100_000}, nil)
	}
}

// segRefs is a slot's segments but for their epochs and first mutexes:
// the fields of few segments' more are kept apart, made for the slot by
// the first of them.
type segRefs struct {
	ways [segWays]segRef
	more atomic.Pointer[[segWays]atomic.Pointer[segMore]]
}

// madeRefs is the slot's segRefs, made by the first caller (who holds
// the slot's lock) and published to the C side too (slotMeta.refs).
func (s *segSlot) madeRefs() *segRefs {
	refs := s.refs.Load()
	if refs == nil {
		refs = new(segRefs)
		s.refs.Store(refs)
		s.meta.refs.Store(uintptr(unsafe.Pointer(refs)))
	}
	return refs
}

// segRef is a way's clock snapshot, written under the slot's lock. The
// C side reads way i's at the slot's refs + 8 i (slotMeta.refs).
type segRef struct {
	vc atomic.Pointer[shadow.VC]
}

// load is way i's segment if its key is key (ok false otherwise). A
// way being written is waited for: a materialization (below) may
// rewrite a way at any time, not only a publication under a mutex the
// reader holds, which it would not miss.
func (st *segTable) load(s *segSlot, i int, key uint64) (seg wrSeg, ok bool) {
	for {
		seq := s.meta.seq.stable()
		if s.ways[i].key.Load() != key {
			if s.meta.seq.Load() == seq {
				return seg, false
			}
			continue
		}
		seg, ok = st.seg(s, i)
		if s.meta.seq.Load() == seq {
			return seg, ok
		}
	}
}

// seg is the segment of way i (ok false for none), read under the
// slot's lock or between two equal even seqs.
func (st *segTable) seg(s *segSlot, i int) (seg wrSeg, ok bool) {
	seg = wrSeg{mutex: s.meta.mutex[i].Load(), epoch: shadow.Epoch(s.ways[i].epoch.Load())}
	if s.meta.cmade.Load()&(1<<i) != 0 {
		seg.vc = st.snapAt(seg.tid(), seg.clock(), nil)
		return seg, seg.vc != nil
	}
	refs := s.refs.Load()
	if refs == nil {
		return seg, false
	}
	seg.vc = refs.ways[i].vc.Load()
	if more := refs.more.Load(); more != nil {
		seg.more = more[i].Load()
	}
	return seg, seg.vc != nil
}

// store makes seg way i's segment, under key (the caller holds the
// slot's lock). A way that held another key is taken from the C side's
// readers (key 0) while its epoch changes; one that held key already is
// not: either epoch is one of key's. (Each store is a locked instruction:
// a pipeline's region publishes a few variables, each of them again.)
func (s *segSlot) store(i int, key uint64, seg *wrSeg) {
	refs := s.refs.Load()
	r, w := &refs.ways[i], &s.ways[i]
	same := w.key.Load() == key
	if !same {
		w.key.Store(0)
	}
	storeSeg(&r.vc, &s.meta.mutex[i], seg)
	if c := s.meta.cmade.Load(); c&(1<<i) != 0 {
		s.meta.cmade.Store(c &^ (1 << i))
	}
	more := refs.more.Load()
	if more == nil && seg.more != nil {
		more = new([segWays]atomic.Pointer[segMore])
		refs.more.Store(more)
	}
	if more != nil && more[i].Load() != seg.more {
		more[i].Store(seg.more)
	}
	w.epoch.Store(uint64(seg.epoch))
	if !same {
		w.key.Store(key)
	}
}

// storeSeg writes seg's clock and first mutex where a table keeps them
// (segRef and slotMeta, rlRef), each only if it changes: a store of Go's
// atomics is a locked instruction, and a thread's regions mostly publish
// under the same clock snapshot and mutex as the way's last.
func storeSeg(vc *atomic.Pointer[shadow.VC], mutex *atomic.Uint64, seg *wrSeg) {
	if vc.Load() != seg.vc {
		vc.Store(seg.vc)
	}
	if mutex.Load() != seg.mutex {
		mutex.Store(seg.mutex)
	}
}

// held is way i's segment, for the holder of the slot's lock; ok false
// for a free way.
func (st *segTable) held(s *segSlot, i int) (seg wrSeg, ok bool) {
	if s.ways[i].key.Load() == 0 {
		return seg, false
	}
	return st.seg(s, i)
}

// materializeAll materializes every way the C side wrote for thread tid.
func (st *segTable) materializeAll(tid uint16) {
	slots := st.slots.Load()
	if slots == nil {
		return
	}
	for i := range *slots {
		if c := (*slots)[i].meta.cmade.Load(); c != 0 {
			for w := range segWays {
				if c&(1<<w) != 0 {
					st.materialize(uint32(i*segWays+w), tid, nil)
				}
			}
		}
	}
}

// materialize puts in way w (slot w/segWays) the clock it keeps in its
// thread's snapshot ring, if the C side wrote it for thread tid and it
// keeps it there still (slotMeta.cmade): the ring keeps only the entries
// of a few joins (thread.materialize). It returns the clock (have, when
// that is it), for the next way.
func (st *segTable) materialize(w uint32, tid uint16, have *shadow.VC) *shadow.VC {
	slots := st.slots.Load()
	if slots == nil || int(w/segWays) >= len(*slots) {
		return have
	}
	s, i := &(*slots)[w/segWays], int(w%segWays)
	s.meta.seq.lock()
	defer s.meta.seq.unlock()
	c := s.meta.cmade.Load()
	e := shadow.Epoch(s.ways[i].epoch.Load())
	if c&(1<<i) == 0 || e.TID() != tid {
		return have
	}
	vc := st.snapAt(tid, e.Clock(), have)
	refs := s.madeRefs()
	refs.ways[i].vc.Store(vc)
	if more := refs.more.Load(); more != nil {
		more[i].Store(nil)
	}
	s.meta.cmade.Store(c &^ (1 << i))
	return vc
}

// newSegTable makes a table of 1<<bits slots; published, if not nil, is
// told where its keys are once they are (handoffMemory). Its owner sets
// snapAt before the C side can publish there.
func newSegTable(bits uint, published func(keys uintptr)) *segTable {
	return &segTable{bits: bits, published: published}
}

// segSlotIndex is key's slot among 1<<bits (runtime/fastpath.c,
// hg_handoff_news, computes it too).
func segSlotIndex(key uint64, bits uint) uint64 {
	return (key >> 2) * 0x9e3779b97f4a7c15 >> (64 - bits)
}

// slot is key's slot; nil before the first put.
func (st *segTable) slot(key uint64) *segSlot {
	slots := st.slots.Load()
	if slots == nil {
		return nil
	}
	return &(*slots)[segSlotIndex(key, st.bits)]
}

// handoffMemory is the memory of a hand-off table's n ways (segWay for
// the published writes, rlWay for the reader log) and what the C side
// reads of its overflow segment (overHead), laid out for the C fast
// path: the head in the first of 64 bytes, then the ways. It is mapped
// outside the Go heap (no Go pointer types in it: the collector does not
// scan it), or made in the heap when it cannot be (base 0: the fast path
// is then told HandoffInHeap).
func handoffMemory[W any](n int) (head *overHead, ways []W, base uintptr) {
	const header = 64
	var w W
	size := header + n*int(unsafe.Sizeof(w))
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return new(overHead), make([]W, n), 0
	}
	p := unsafe.Pointer(unsafe.SliceData(mem))
	return (*overHead)(p), unsafe.Slice((*W)(unsafe.Add(p, header)), n), uintptr(p)
}

// overHead is where the C side reads a hand-off table's overflow
// segment (the table's first bytes: struct hg_over_head): its id, and
// the address of its clock (a shadow.VC, which the overflow keeps) when
// it stands for any mutex, else 0, written together under seq (odd
// while they change: a reader that reads seq even, the clock, and seq
// again read the clock of the segment that id names). The C side
// evicts a way that such an overflow covers already, as evict does
// (runtime/regionpub.c, hg_write_publish).
type overHead struct {
	id       atomic.Uint64
	anyClock atomic.Uintptr
	seq      atomic.Uint64
	// refs is, for the reader log, the address of its rlRefs (readLog.refs,
	// which keeps them), where the C side reads a way's clock and
	// mutexes to join it (runtime/fastpath.c, hg_readers_join)
	refs atomic.Uintptr
}

// overflow is a hand-off table's evicted entries folded into one segment
// (nil while none was), for every variable of the table: one pointer that a
// thread checks once per change (thread.overKnown), where one per slot
// would cost a cache miss per look-up. head is what the C fast path
// reads of the segment (handoffMemory): its id, and its clock when it
// stands for any mutex.
type overflow struct {
	seg  atomic.Pointer[wrSeg]
	head *overHead
	mu   sync.Mutex
}

func (o *overflow) Load() *wrSeg { return o.seg.Load() }

// fold makes the overflow stand for seg too.
func (o *overflow) fold(seg *wrSeg) {
	o.mu.Lock()
	over := folded(o.seg.Load(), seg)
	o.head.seq.Add(1)
	o.seg.Store(over)
	var clock uintptr
	if over.anyMutex() {
		clock = uintptr(unsafe.Pointer(over.vc)) // o.seg keeps it
	}
	o.head.anyClock.Store(clock)
	o.head.id.Store(over.more.id)
	o.head.seq.Add(1)
	o.mu.Unlock()
}

// news is an entry of key that vc, the clock of thread tid, does not
// know yet (ok false for none: the table keeps one entry per variable),
// and the overflow (nil while none), which may hold more.
func (st *segTable) news(key uint64, tid uint16, vc *shadow.VC) (seg wrSeg, ok bool, over *wrSeg) {
	s := st.slot(key)
	if s == nil {
		return seg, false, nil
	}
	for i := range s.ways {
		w := &s.ways[i]
		if w.key.Load() != key {
			continue
		}
		e := shadow.Epoch(w.epoch.Load())
		if e.TID() == tid || vc.HappensBefore(e) {
			continue
		}
		if seg, ok = st.load(s, i, key); ok {
			break
		}
	}
	return seg, ok, st.over.Load()
}

// warm loads the slots of the keys of addrs (key maps an address to its
// key) before they are put one by one: the loads do not depend on each
// other, so their cache misses overlap instead of following one another
// (a region publishes up to 32 variables at its unlock, each in a slot of
// its own, and a slot is rarely in the cache).
func (st *segTable) warm(addrs []uint64, key func(uint64) uint64) {
	slots := st.slots.Load()
	if slots == nil {
		return
	}
	var sink uint64
	for _, a := range addrs {
		s := &(*slots)[segSlotIndex(key(a), st.bits)]
		if refs := s.refs.Load(); refs != nil && refs.ways[0].vc.Load() != nil { // the slot's other lines, read atomically as put writes them
			sink++
		}
		sink += s.ways[0].key.Load()
	}
	if sink == 1<<63 { // never: the loads' results are used, without a shared write per call
		warmSink.Store(sink)
	}
}

// warmSink keeps warm's loads.
var warmSink atomic.Uint64

// find is an entry of key (ok false for none).
func (st *segTable) find(key uint64) (seg wrSeg, ok bool) {
	s := st.slot(key)
	if s == nil {
		return seg, false
	}
	for i := range s.ways {
		if seg, ok = st.load(s, i, key); ok {
			return seg, true
		}
	}
	return seg, false
}

// put makes seg an entry of key. It replaces the entries of key, else
// takes a free way, else evicts the least recently written entry into the
// overflow. With chain, the entry that replaces another segment carries
// its past too (chained).
func (st *segTable) put(key uint64, seg *wrSeg, chain bool) {
	st.alloc.Do(func() {
		slots := make([]segSlot, 1<<st.bits)
		head, mem, base := handoffMemory[segSlotMem](len(slots))
		for i := range slots {
			slots[i].ways, slots[i].meta = &mem[i].ways, &mem[i].meta
		}
		st.over.head = head
		st.slots.Store(&slots)
		if st.published != nil {
			st.published(cmp.Or(base, HandoffInHeap))
		}
	})
	s := st.slot(key)
	s.meta.seq.lock()
	defer s.meta.seq.unlock()
	s.madeRefs()
	victim := -1
	for i := range s.ways {
		w := &s.ways[i]
		if w.key.Load() != key {
			continue
		}
		if victim >= 0 {
			w.key.Store(0) // one entry stands for both
			continue
		}
		victim = i
		if chain {
			if old, _ := st.held(s, i); old.epoch != seg.epoch || old.vc != seg.vc {
				seg = chained(seg, &old)
			}
		}
	}
	for i := 0; i < segWays && victim < 0; i++ {
		if s.ways[i].key.Load() == 0 {
			victim = i
		}
	}
	if victim < 0 {
		victim = st.evict(s)
	}
	s.meta.puts++
	s.meta.used[victim] = s.meta.puts
	s.store(victim, key, seg)
}

// evict empties a way of the full slot s: one whose segment the overflow
// already covers, else the least recently written one, folded into the
// overflow.
func (st *segTable) evict(s *segSlot) int {
	over := st.over.Load()
	victim := 0
	for i := range s.ways {
		if seg, ok := st.held(s, i); over != nil && (!ok || over.covers(&seg)) {
			return i
		}
		if m := s.meta; m.puts-m.used[i] > m.puts-m.used[victim] { // oldest, modulo wrap-around
			victim = i
		}
	}
	if seg, ok := st.held(s, victim); ok {
		st.over.fold(&seg)
	}
	return victim
}

// covers reports whether the overflow over already stands for seg: it
// happens after seg, under seg's mutexes.
func (over *wrSeg) covers(seg *wrSeg) bool {
	if seg == nil {
		return true
	}
	if over.vc.Get(seg.tid()) < seg.clock() || !seg.vc.LessEq(over.vc) {
		return false
	}
	if over.anyMutex() {
		return true
	}
	for m := range seg.mutexes() {
		if !over.under(m) {
			return false
		}
	}
	return !seg.anyMutex()
}

// overflowMutexes bounds the mutexes an overflow segment keeps; beyond
// them it holds for any lock.
const overflowMutexes = 8

// overflowIDs numbers overflow segments.
var overflowIDs atomic.Uint64

// folded is the overflow segment over (nil for none) with seg folded in:
// the join of their clocks, under the union of their mutexes.
func folded(over, seg *wrSeg) *wrSeg {
	if seg == nil {
		return over
	}
	more := &segMore{folded: true, id: overflowIDs.Add(1), anyMutex: seg.anyMutex()}
	n := &wrSeg{epoch: seg.epoch, vc: seg.vc.Copy(), more: more}
	if n.vc.Get(seg.tid()) < seg.clock() {
		n.vc.Set(seg.tid(), seg.clock())
	}
	for m := range seg.mutexes() {
		n.addMutex(m)
	}
	if over != nil {
		n.vc.Join(over.vc)
		more.anyMutex = more.anyMutex || over.anyMutex()
		for m := range over.mutexes() {
			if !n.under(m) {
				n.addMutex(m)
			}
		}
	}
	if more.anyMutex || n.mutexCount() > overflowMutexes {
		n.mutex, more.anyMutex, more.mutexes = 0, true, nil
	}
	return n
}

// under reports whether seg was published under mutex m.
func (seg *wrSeg) under(m uint64) bool {
	for x := range seg.mutexes() {
		if x == m {
			return true
		}
	}
	return false
}
