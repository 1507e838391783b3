package detect

import (
	"cmp"
	"iter"

	"hgrewrite/abi"
	"hgrewrite/shadow"
)

// Lock hand-offs (HG_OPTIONS handoff, on by default).
//
// The hybrid algorithm takes no happens-before from locks (dissertation
// 5.1.1): two accesses are a race when neither happens before the other
// and they hold no lock in common. That finds races that a pure
// happens-before detector misses because the threads happened to take a
// lock in between, but it also reports every object handed from one thread
// to another through lock-protected state: a queue, a free list, a pool, a
// reference count, a flag polled under the mutex. Real programs do that
// everywhere, and the object is then used without the lock.
//
// The write/read relation of chapter 6, which orders a condition
// variable's waiter after the signaller whose writes it read, is applied
// to every mutex: at the unlock that ends a lock-protected region, the
// variables the region wrote map to the releasing thread's segment (DS,
// wrSegs below, recorded with the region's mutex). When a later region of
// another thread, holding the same mutex, reads one of those variables, the
// reader's segment joins that segment: the reader happens after the
// writer's region. Data flowed through the lock, so the hand-off is real.
//
// A lock that merely happened to be taken in between orders nothing: if
// the later region reads nothing the earlier one wrote, the two threads
// stay unordered and the lockset rule still applies. So a write made
// without the lock and a later write made with it are still reported when
// no data passed through the lock, which pure happens-before detectors
// miss. What is lost is a race whose accesses are separated by a genuine
// hand-off through the lock: C11 orders those accesses too, so that is no
// race.
//
// Limits: a region records the first HG_REC (32) addresses it reads and
// writes, by exact address (a region that read more stands, in the reader
// log, for every variable: condState.readsAll); a reader that reads a
// published variable through another address (a byte of a word written
// whole) finds no relation.

// wrSeg is one published segment: the writer's vector clock when its
// region ended, the writer's own epoch in it, the mutexes the writer held
// when it wrote the variables (the one whose region or nested lock ended,
// and any still held; none for a condition variable's signal outside a
// region); the tables map its variables to it. vc is a snapshot shared
// by the writer's segments until its next join (thread.snapshot): its own
// component may be older than the epoch's clock, which the reader takes
// from the epoch. Never changed once published. A lock-heavy program keeps
// tens of thousands published, one per region, so the common one (a
// region under one mutex) is 32 bytes, the smallest size class that holds
// it; the rest goes in more.
type wrSeg struct {
	vc    *shadow.VC
	epoch shadow.Epoch // the writer and its clock at the region's end
	mutex uint64       // the first mutex (0: none)
	more  *segMore     // nil but for more mutexes or an overflow
}

// segMore is what few segments have.
type segMore struct {
	mutexes []uint64 // past the first
	id      uint64   // of an overflow, for thread.overKnown
	// an overflow of a segTable: vc holds the whole past of the
	// segments folded into it; anyMutex, that they were published under
	// more mutexes than it keeps, so that it holds for any lock
	folded, anyMutex bool
}

// newSeg is a segment of thread tid at clock, under no mutex yet. The
// tables keep a segment's fields, not the segment (segSlot, readLog): one
// made to be published is a value.
func newSeg(vc *shadow.VC, tid uint16, clock uint64) wrSeg {
	return wrSeg{vc: vc, epoch: shadow.MakeEpoch(tid, clock)}
}

func (seg *wrSeg) tid() uint16   { return seg.epoch.TID() }
func (seg *wrSeg) clock() uint64 { return seg.epoch.Clock() }

func (seg *wrSeg) folded() bool   { return seg.more != nil && seg.more.folded }
func (seg *wrSeg) anyMutex() bool { return seg.more != nil && seg.more.anyMutex }

// addMutex adds m to the mutexes seg was published under.
func (seg *wrSeg) addMutex(m uint64) {
	if seg.mutex == 0 {
		seg.mutex = m
		return
	}
	if seg.more == nil {
		seg.more = &segMore{}
	}
	seg.more.mutexes = append(seg.more.mutexes, m)
}

// mutexCount is the number of mutexes seg was published under.
func (seg *wrSeg) mutexCount() int {
	n := 0
	for range seg.mutexes() {
		n++
	}
	return n
}

// mutexes is the mutexes seg was published under (none for anyMutex).
func (seg *wrSeg) mutexes() iter.Seq[uint64] {
	return func(yield func(uint64) bool) {
		if seg.mutex == 0 || !yield(seg.mutex) || seg.more == nil {
			return
		}
		for _, m := range seg.more.mutexes {
			if !yield(m) {
				return
			}
		}
	}
}

// segmentOf makes the segment t publishes for variables
// written under mutex (being released; exclusive says it was held in
// write mode) and the locks t still holds in write mode. A lock held only
// for reading is left out: its other holders may have run at the same
// time, so taking it after this thread does not order their reads after
// these writes (a write under a read lock is itself a race).
func (d *Detector) segmentOf(t *thread, mutex uint64, exclusive bool) wrSeg {
	tid := uint16(t.tid)
	seg := newSeg(t.snapshot(), tid, t.vc.Get(tid))
	if mutex != 0 && exclusive {
		seg.addMutex(mutex)
	}
	if t.holdsOnly(mutex) {
		return seg
	}
	for _, h := range t.depth {
		if h.mutex != mutex && d.locks.Contains(t.writeHeld, h.mutex) {
			seg.addMutex(h.mutex)
		}
	}
	return seg
}

// holdsOnly reports whether t holds no lock but m, if any (a cheaper
// question than a walk of t.depth, which a region asks at every
// publication).
func (t *thread) holdsOnly(m uint64) bool { return t.depth.only(m) }

// heldBy reports whether t holds one of the mutexes seg was written under.
func (seg *wrSeg) heldBy(t *thread) bool {
	if seg.anyMutex() {
		return true // t is inside a region
	}
	for m := range seg.mutexes() {
		if t.depth.count(m) > 0 {
			return true
		}
	}
	return false
}

// snapshot is a copy of t's vector clock that stays valid until t joins
// another clock; ticks change only t's own component, which segments keep
// apart. Publishing a region then costs no copy of the clock. The C side
// is told of it (its snapshot ring takes it): it publishes t's regions
// under it until t's next join (runtime/regionpub.c).
func (t *thread) snapshot() *shadow.VC {
	if t.snap == nil {
		// the ways the C side wrote since the last snapshot mostly
		// name it: materialized now, they cost no look-up in the ring
		t.materialize(true)
		t.snap = t.vc.Copy()
		if t.rec != nil {
			t.rec.KnowSnapshot(t.snap)
		}
	}
	return t.snap
}

// dropSnapshot ends t's snapshot: t joins another clock.
func (t *thread) dropSnapshot() {
	if t.snap != nil {
		t.lastSnap, t.snap = t.snap, nil
	}
}

// snapAt is the clock of the hand-off ways the C side wrote for thread
// tid at its clock `clock` (runtime/regionpub.c: the ways keep it in the
// thread's snapshot ring), nil for none; have, if not nil, when that is
// the clock (a materialization gives the ways of regions between two
// joins one clock). A ring entry being written is read again: its thread
// writes it in a few stores.
func (d *Detector) snapAt(tid uint16, clock uint64, have *shadow.VC) *shadow.VC {
	for spins := 0; spins < snapAtSpins; spins++ {
		if vc, ok := d.host.SnapshotAt(tid, clock, have); ok {
			return vc
		}
		backOff(spins)
	}
	return nil // never seen: the way then counts as empty, where waiting on would hang the program
}

// snapAtSpins bounds snapAt's rounds: past 64 Ki of them each one sleeps
// (backOff), about half a second in all.
const snapAtSpins = 70 << 10

// materialize writes into the hand-off ways the C side wrote for t (the
// record's list) the clock they keep in t's snapshot ring, which keeps
// only the entries such ways may name (HG_SNAPS joins' worth). A call of
// t's does it first (Flush) once the list or the ring is half full, and
// t's end does it whatever (all): t's id may go to a thread whose
// entries the ring would hold in their place.
func (t *thread) materialize(all bool) {
	if t.rec == nil {
		return
	}
	t.cmade = t.rec.TakeCMade(t.cmade[:0], all)
	vc := cmp.Or(t.snap, t.lastSnap) // the clock most of them name: no copy for them
	for _, w := range t.cmade {
		if table, way := HandoffTable(w>>31), w&(1<<31-1); table == HandoffWrites {
			vc = t.det.wrSeg.table.materialize(way, uint16(t.tid), vc)
		} else {
			vc = t.det.rdSeg.materialize(int(way), uint16(t.tid), vc)
		}
	}
}

// materializeAll materializes every way the C side wrote for thread tid,
// wherever it is in the tables.
func (d *Detector) materializeAll(tid uint16) {
	d.wrSeg.table.materializeAll(tid)
	d.rdSeg.materializeAll(tid)
}

// join makes t's clock at least v (every join goes through here, so that
// the snapshot is dropped). A join that brings nothing changes nothing:
// the snapshot stays t's clock, and so does what the fast path was told
// of t's last join. Every join dropped the snapshot until 2026-11-27:
// a condition waiter's loop exit joins again the segments its region's
// reads joined already (handleWait), and each such join cost the
// thread's next publication a new snapshot.
func (t *thread) join(v *shadow.VC) {
	if v.LessEq(t.vc) {
		return
	}
	t.dropSnapshot()
	t.vc.Join(v)
	t.mirror(v)
	t.joined()
}

// raise makes t's clock hold clock for thread tid: a join of one
// component, which the C side made at an acquire of an atomic word
// (abi.ClockRaise; runtime/fastpath.c, hg_take_in), and wrote into t's
// row already.
func (t *thread) raise(tid uint16, clock uint64) {
	if t.vc.Get(tid) >= clock {
		return
	}
	t.dropSnapshot()
	t.raiseTo(tid, clock)
	t.joined()
}

// raiseTo sets t's component of thread tid to clock, above where it is,
// and its row's (mirror).
func (t *thread) raiseTo(tid uint16, clock uint64) {
	t.vc.Set(tid, clock)
	if t.clocks != nil && int(tid) < len(t.clocks) {
		t.clocks[tid] = clock
		t.mirrored = max(t.mirrored, int(tid)+1)
	}
}

// joinSeg makes t happen after seg.
func (t *thread) joinSeg(seg *wrSeg) {
	t.raise(seg.tid(), seg.clock()) // the epoch may be news where the snapshot is not
	t.join(seg.vc)
}

// joined tells t's fast path that t's clock changed by a join at t's
// current clock (Region.KnowJoin). The first flush tells it too.
func (t *thread) joined() {
	if t.rec != nil {
		t.rec.KnowJoin(t.vc.Get(uint16(t.tid)))
	}
}

// mirror copies into t's clock row the components of t's clock that a
// join with v may have changed (those v has): the C fast path reads the
// row to see that a location's owner happens before the thread's access
// (Host.ClockRow). Only t's own calls change t's clock, so the row is
// written on the thread that reads it.
func (t *thread) mirror(v *shadow.VC) {
	if t.clocks == nil {
		return
	}
	n := min(v.Len(), len(t.clocks))
	for i := 0; i < n; i++ {
		t.clocks[i] = t.vc.Get(uint16(i))
	}
	t.mirrored = max(t.mirrored, n)
}

// publishSince publishes the writes a region made under mutex (the
// record's writes from index mark on), as written under it and the locks
// t still holds, when mutex is released inside the region: a lock taken
// inside the region is unlocked, or a condition wait releases the mutex
// (the region's own, mark 0, or a nested lock's). A worker that puts its
// result on a queue under the scheduler's mutex and then waits on a
// condition variable for more work hands the result to whichever thread
// takes the mutex while it sleeps; its region has not ended yet. The
// region's reads so far are published under mutex too.
func (d *Detector) publishSince(t *thread, mutex uint64, exclusive bool, mark int) {
	if !d.opts.Handoff {
		return
	}
	t.cond.load(t.rec)
	published := false
	if mark < len(t.cond.writes) {
		seg := d.segmentOf(t, mutex, exclusive)
		d.publish(&seg, t.cond.writes[mark:])
		published = true
	}
	if len(t.cond.reads) > 0 {
		// the region's reads so far, for a writer that takes only this
		// mutex next (reverse hand-offs): GNU sort's merge threads hold
		// a node's lock and compare queued nodes under the queue's
		seg := d.readSegmentOf(t, mutex)
		d.rdSeg.put(&seg, t.cond.reads, t.cond.readsAll)
		published = true
	}
	if published {
		d.tick(t)
	}
}

// handoffRead runs before t's read at addr inside a lock-protected region:
// if another thread's region under a mutex t holds now wrote addr and
// published it, t joins that region's segment.
func (d *Detector) handoffRead(t *thread, addr uint64) {
	if !d.opts.Handoff || !d.opts.Lib {
		return
	}
	seg, ok, over := d.wrSeg.table.news(wrKey(addr), uint16(t.tid), t.vc)
	switch {
	case ok: // news, as the table found
		if seg.heldBy(t) {
			t.joinSeg(&seg)
			d.tick(t)
		}
	case over != nil && over.heldBy(t) && over.news(t):
		if _, found := d.wrSeg.table.find(wrKey(addr)); !found {
			t.joinSeg(over) // addr's segment may have been evicted into it
			d.tick(t)
		}
	}
	t.knowOverflow(HandoffWrites, over)
}

// knowOverflow tells t's fast path that t knows the overflow segment
// over of a table (nil: none), if it does: its look-ups there that find
// no entry need the Go side only when the overflow changes.
func (t *thread) knowOverflow(table HandoffTable, over *wrSeg) {
	if over != nil && t.rec != nil && !over.news(t) {
		t.rec.KnowOverflow(table, over.more.id)
	}
}

// news reports whether seg holds something t does not know yet.
func (seg *wrSeg) news(t *thread) bool {
	if seg.folded() { // an overflow: its epoch is one of many
		for _, k := range t.overKnown {
			if k == seg.more.id {
				return false // t's clock only grows
			}
		}
		if !seg.vc.LessEq(t.vc) {
			return true
		}
		t.overKnown[seg.more.id%uint64(len(t.overKnown))] = seg.more.id
		return false
	}
	return seg.tid() != uint16(t.tid) && t.vc.Get(seg.tid()) < seg.clock()
}

// wrSegs is DS: variable -> the last segment published for it, by a
// signaller that wrote it in its lock-protected region before signalling,
// or by a region that ended. Every read inside a region looks here, so a
// look-up of a variable nobody published touches one slot's keys.
type wrSegs struct{ table *segTable }

func newWrSegs(published func(keys uintptr)) *wrSegs {
	return &wrSegs{newSegTable(wrSegBits, published)}
}

const wrSegBits = 13

// wrKey is a's key: variables are published by exact address (0 is free).
func wrKey(a uint64) uint64 { return a + 1 }

// publish makes seg the segment of each of addrs. Without
// hand-offs, a variable's new segment also carries the one it replaces
// (chained): the region that wrote it last under a mutex usually read the
// value the earlier regions left there (a completion counter incremented
// by each pool worker), and a condition waiter that reads it must be
// ordered after all of them, as it is with hand-offs, where each writer
// joined the previous one when it read the variable.
func (d *Detector) publish(seg *wrSeg, addrs []uint64) {
	d.wrSeg.table.warm(addrs, wrKey)
	for _, a := range addrs {
		d.wrSeg.table.put(wrKey(a), seg, !d.opts.Handoff)
	}
}

// chained is the segment seg publishes for a variable, carrying the past
// of old, the one it replaces there.
func chained(seg, old *wrSeg) *wrSeg {
	vc := seg.vc.Copy()
	vc.Join(old.vc)
	if vc.Get(old.tid()) < old.clock() {
		vc.Set(old.tid(), old.clock())
	}
	return &wrSeg{vc: vc, epoch: seg.epoch, mutex: seg.mutex, more: seg.more}
}

// get is the segment published for a (ok false for none: an evicted one
// is not returned, and a condition waiter then falls back to TS_cv).
func (w *wrSegs) get(a uint64) (wrSeg, bool) { return w.table.find(wrKey(a)) }

// joinInto makes t happen after the segments of the addresses that have
// one and reports whether there was any. An address without one may have
// lost it to the overflow, which t then joins too: a waiter that found the
// segment of one variable it read must not miss the writer of another.
func (w *wrSegs) joinInto(t *thread, addrs []uint64) bool {
	found, missing := false, false
	for _, a := range addrs {
		if seg, ok := w.get(a); ok {
			t.joinSeg(&seg)
			found = true
		} else {
			missing = true
		}
	}
	if over := w.table.over.Load(); missing && over != nil && over.news(t) {
		t.joinSeg(over)
	}
	return found
}

// Reverse hand-offs. A region that reads what an earlier region of
// another thread wrote under the same mutex is ordered after it (above);
// so is a region that writes what an earlier region read: the reader's
// region released the mutex before the writer's took it, or the reader
// would have seen the write. A registry whose readers look an object up
// and use it under the mutex, and whose remover unlinks the object under
// the mutex and deletes it after unlocking, depends on it: the remover's
// region writes (or frees) the links and entries the readers' regions
// read, and its later delete is ordered after the readers' uses. So is
// a map swapped under a lock and destroyed outside it. Regions that read
// publish their recorded reads (readLog); a write in a region (a free
// made there counts, for the block's first bytes) joins the segments
// published for what it writes, if the writer holds one of the mutexes
// the reader held.

// publishSoFar publishes what the region recorded so far, under the locks
// t holds, when a lock is taken inside it and the C side found the record
// filling (mode, the lock's abi bits): the writes when half of the record
// is taken (abi.LockWritesFull), the reads when it is full
// (abi.LockReadsFull). The C side then records those afresh, so that
// what the region writes and reads under the new lock is seen too.
//   - Writes: a thread that holds its own lock for a whole pass fills
//     the record with what it writes under that lock alone; memcached's
//     LRU maintainer then returned items to the slab free list under
//     the nested slab lock unseen, and every item a worker took from the
//     list and filled was reported against the maintainer's writes of
//     its links.
//   - Reads: a merge thread that holds a node's lock and reads many
//     lines, then compares queued nodes under the queue's lock.
func (d *Detector) publishSoFar(t *thread, mode uint64) {
	writes, reads := mode&abi.LockWritesFull != 0, mode&abi.LockReadsFull != 0
	if reads {
		t.cond.joined = 0 // the C side records the reads afresh
	}
	if !d.opts.Handoff {
		return
	}
	t.cond.load(t.rec)
	if writes && len(t.cond.writes) > 0 {
		seg := d.segmentOf(t, 0, true)
		d.publish(&seg, t.cond.writes)
		d.tick(t)
	}
	if reads && len(t.cond.reads) > 0 {
		seg := d.readSegmentOf(t, 0)
		d.rdSeg.put(&seg, t.cond.reads, t.cond.readsAll)
		d.tick(t)
	}
}

// readSegmentOf makes the segment t publishes for the variables it read
// in its region, as read under mutex (being released) and every lock t
// still holds, in either mode (a reader under a read lock is ordered
// before the next writer).
func (d *Detector) readSegmentOf(t *thread, mutex uint64) wrSeg {
	tid := uint16(t.tid)
	seg := newSeg(t.snapshot(), tid, t.vc.Get(tid))
	if mutex != 0 {
		seg.addMutex(mutex)
	}
	if t.holdsOnly(mutex) {
		return seg
	}
	for _, h := range t.depth {
		if h.mutex != mutex {
			seg.addMutex(h.mutex)
		}
	}
	return seg
}

// handoffWrite runs before t's write of [addr, addr+size) inside a
// lock-protected region: t joins the published read segments of the
// granules written (the first handoffWriteWords) whose readers held, in
// their regions, a mutex t holds now in write mode (readLog).
func (d *Detector) handoffWrite(t *thread, addr, size uint64) {
	if !d.opts.Handoff || !d.opts.Lib {
		return
	}
	joined := false
	lo := addr &^ (shadow.GranuleSize - 1)
	hi := min(addr+size, addr+handoffWriteWords*shadow.GranuleSize)
	if len(t.depth) == 1 && t.depth[0].mutex == t.regionMutex { // the region's mutex alone
		if d.locks.Contains(t.writeHeld, t.regionMutex) {
			joined = d.joinReaders(t, t.regionMutex, lo, hi)
		}
	} else {
		for _, h := range t.depth {
			if d.locks.Contains(t.writeHeld, h.mutex) {
				joined = d.joinReaders(t, h.mutex, lo, hi) || joined
			}
		}
	}
	over := d.rdSeg.over.Load()
	joined = d.joinReader(t, over) || joined
	t.knowOverflow(HandoffReads, over)
	if joined {
		d.tick(t)
	}
}

// joinReaders makes t happen after the reader segments published under m
// that t does not know and that read a granule of [lo, hi), and reports
// whether there was any.
func (d *Detector) joinReaders(t *thread, m, lo, hi uint64) bool {
	var segs [rlWays]wrSeg
	n, _ := d.rdSeg.news(t, m, lo, hi, &segs)
	joined := false
	for i := range n {
		joined = d.joinReader(t, &segs[i]) || joined
	}
	return joined
}

// joinReader makes t, which writes under a lock, happen after the reader
// segment seg (nil for none) if t holds one of its mutexes in write mode.
func (d *Detector) joinReader(t *thread, seg *wrSeg) bool {
	if seg == nil || !seg.news(t) || !d.writeHeldBy(seg, t) {
		return false
	}
	t.joinSeg(seg)
	return true
}

// writeHeldBy reports whether t holds, in write mode, one of the mutexes
// seg was read under: a writer under a read lock may run at the same time
// as the readers, and is ordered after none of them.
func (d *Detector) writeHeldBy(seg *wrSeg, t *thread) bool {
	if seg.anyMutex() {
		return t.writeHeld != 0
	}
	for m := range seg.mutexes() {
		if d.locks.Contains(t.writeHeld, m) {
			return true
		}
	}
	return false
}

// handoffWriteWords bounds the words of one write (a free: of the block's
// start) that handoffWrite looks up.
const handoffWriteWords = 64

// granuleKey is the reader log's key of the granule holding a (0 is
// free): reads are recorded at their first byte, writes looked up granule
// by granule.
func granuleKey(a uint64) uint64 { return a&^(shadow.GranuleSize-1) + 1 }
