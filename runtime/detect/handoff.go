package detect

import (
	"sync"
	"sync/atomic"

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
// writes, by exact address; a reader that reads a published variable
// through another address (a byte of a word written whole) finds no
// relation.

// wrSeg is one published segment: the writer's vector clock when its
// region ended, the writer's own epoch in it, the mutexes the writer held
// when it wrote the variables (the one whose region or nested lock ended,
// and any still held; none for a condition variable's signal outside a
// region) and the variables. vc is a snapshot shared by the writer's segments until
// its next join (thread.snapshot): its own component may be older than
// clock, which the reader takes from clock. Never changed once published.
type wrSeg struct {
	vc      *shadow.VC
	tid     uint16
	clock   uint64
	mutexes []uint64
	addrs   []uint64
}

// has reports whether the segment published a.
func (s *wrSeg) has(a uint64) bool {
	for _, x := range s.addrs {
		if x == a {
			return true
		}
	}
	return false
}

// segmentOf makes the segment t publishes for the variables addrs, as
// written under mutex (being released; exclusive says it was held in
// write mode) and the locks t still holds in write mode. A lock held only
// for reading is left out: its other holders may have run at the same
// time, so taking it after this thread does not order their reads after
// these writes (a write under a read lock is itself a race).
func (d *Detector) segmentOf(t *thread, mutex uint64, exclusive bool, addrs []uint64) *wrSeg {
	tid := uint16(t.tid)
	seg := &wrSeg{vc: t.snapshot(), tid: tid, clock: t.vc.Get(tid), addrs: append([]uint64(nil), addrs...)}
	if mutex != 0 && exclusive {
		seg.mutexes = append(seg.mutexes, mutex)
	}
	for m, n := range t.depth {
		if n > 0 && m != mutex && d.locks.Contains(t.writeHeld, m) {
			seg.mutexes = append(seg.mutexes, m)
		}
	}
	return seg
}

// heldBy reports whether t holds one of the mutexes seg was written under.
func (seg *wrSeg) heldBy(t *thread) bool {
	for _, m := range seg.mutexes {
		if t.depth[m] > 0 {
			return true
		}
	}
	return false
}

// snapshot is a copy of t's vector clock that stays valid until t joins
// another clock; ticks change only t's own component, which segments keep
// apart. Publishing a region then costs no copy of the clock.
func (t *thread) snapshot() *shadow.VC {
	if t.snap == nil {
		t.snap = t.vc.Copy()
	}
	return t.snap
}

// join makes t's clock at least v (every join goes through here, so that
// the snapshot is dropped).
func (t *thread) join(v *shadow.VC) {
	t.vc.Join(v)
	t.snap = nil
}

// joinSeg makes t happen after seg.
func (t *thread) joinSeg(seg *wrSeg) {
	t.join(seg.vc)
	if t.vc.Get(seg.tid) < seg.clock {
		t.vc.Set(seg.tid, seg.clock)
	}
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
		d.publish(d.segmentOf(t, mutex, exclusive, t.cond.writes[mark:]))
		published = true
	}
	if len(t.cond.reads) > 0 {
		// the region's reads so far, for a writer that takes only this
		// mutex next (reverse hand-offs): GNU sort's merge threads hold
		// a node's lock and compare queued nodes under the queue's
		d.rdSeg.put(d.readSegmentOf(t, mutex, t.cond.reads))
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
	e, ok := d.wrSeg.epoch(addr)
	if !ok || e.TID() == uint16(t.tid) || t.vc.HappensBefore(e) {
		return // nothing published, or nothing new
	}
	if seg := d.wrSeg.get(addr); seg != nil && seg.heldBy(t) {
		t.joinSeg(seg)
		d.tick(t)
	}
}

// wrSegs is DS: variable -> the last segment published for it, by a
// signaller that wrote it in its lock-protected region before signalling,
// or by a region that ended. It is a direct-mapped table read without
// locks, since every read inside a region looks here: a slot holds the
// variable and the writer's epoch next to the segment, so that a read of
// a variable nobody published, or whose writer it already knows, touches
// one cache line. A variable whose slot a later segment took for another
// variable has lost its relation (a condition wait then falls back to
// TS_cv; a hand-off goes unseen and may be reported).
type wrSegs struct {
	slots [wrSlots]wrSlot
}

// wrSlot is written seg, epoch, addr in that order and read in the
// opposite order; a reader that meets a slot being rewritten finds a
// segment that does not hold its variable and takes it as none.
type wrSlot struct {
	addr  atomic.Uint64
	epoch atomic.Uint64
	seg   atomic.Pointer[wrSeg]
	_     uint64
}

const wrSlots = 1 << 16

func (w *wrSegs) slot(a uint64) *wrSlot {
	return &w.slots[(a>>2)*0x9e3779b97f4a7c15>>48]
}

// publish makes seg the segment of each of its variables. Without
// hand-offs, a variable's new segment also carries the one it replaces
// (chained): the region that wrote it last under a mutex usually read the
// value the earlier regions left there (a completion counter incremented
// by each pool worker), and a condition waiter that reads it must be
// ordered after all of them, as it is with hand-offs, where each writer
// joined the previous one when it read the variable.
func (d *Detector) publish(seg *wrSeg) {
	for _, a := range seg.addrs {
		if old := d.wrSeg.get(a); !d.opts.Handoff && old != nil && old != seg {
			d.wrSeg.putOne(a, chained(seg, old, a))
		} else {
			d.wrSeg.putOne(a, seg)
		}
	}
}

// chained is the segment of variable a alone that seg publishes, carrying
// the past of old, the one it replaces.
func chained(seg, old *wrSeg, a uint64) *wrSeg {
	vc := seg.vc.Copy()
	vc.Join(old.vc)
	if vc.Get(old.tid) < old.clock {
		vc.Set(old.tid, old.clock)
	}
	return &wrSeg{vc: vc, tid: seg.tid, clock: seg.clock, mutexes: seg.mutexes, addrs: []uint64{a}}
}

// putOne makes seg the segment of its variable a.
func (w *wrSegs) putOne(a uint64, seg *wrSeg) {
	s := w.slot(a)
	s.seg.Store(seg)
	s.epoch.Store(uint64(shadow.MakeEpoch(seg.tid, seg.clock)))
	s.addr.Store(a)
}

// epoch is the writer's epoch of the segment published for a, if any.
func (w *wrSegs) epoch(a uint64) (shadow.Epoch, bool) {
	s := w.slot(a)
	if s.addr.Load() != a {
		return 0, false
	}
	return shadow.Epoch(s.epoch.Load()), true
}

// get is the segment published for a, or nil.
func (w *wrSegs) get(a uint64) *wrSeg {
	s := w.slot(a)
	if s.addr.Load() != a {
		return nil
	}
	if seg := s.seg.Load(); seg != nil && seg.has(a) {
		return seg
	}
	return nil
}

// joinInto makes t happen after the segments of the addresses that have
// one and reports whether there was any.
func (w *wrSegs) joinInto(t *thread, addrs []uint64) bool {
	found := false
	for _, a := range addrs {
		if seg := w.get(a); seg != nil {
			t.joinSeg(seg)
			found = true
		}
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
// publish their recorded reads (rdSegs); a write in a region (a free
// made there counts, for the block's first bytes) joins the segments
// published for what it writes, if the writer holds one of the mutexes
// the reader held.

// publishReads publishes the reads the region recorded so far, under the
// locks t holds, when the record is full and a nested lock is taken: the
// C side records afresh, so that what the region reads under the new lock
// is seen too (a merge thread that holds a node's lock and reads many
// lines, then compares queued nodes under the queue's lock).
func (d *Detector) publishReads(t *thread) {
	if !d.opts.Handoff {
		return
	}
	t.cond.load(t.rec)
	if len(t.cond.reads) > 0 {
		d.rdSeg.put(d.readSegmentOf(t, 0, t.cond.reads))
		d.tick(t)
	}
}

// readSegmentOf makes the segment t publishes for the variables it read
// in its region: under mutex (being released) and every lock t still
// holds, in either mode (a reader under a read lock is ordered before the
// next writer).
func (d *Detector) readSegmentOf(t *thread, mutex uint64, addrs []uint64) *wrSeg {
	tid := uint16(t.tid)
	seg := &wrSeg{vc: t.snapshot(), tid: tid, clock: t.vc.Get(tid), addrs: append([]uint64(nil), addrs...)}
	if mutex != 0 {
		seg.mutexes = append(seg.mutexes, mutex)
	}
	for m, n := range t.depth {
		if n > 0 && m != mutex {
			seg.mutexes = append(seg.mutexes, m)
		}
	}
	return seg
}

// handoffWrite runs before t's write of [addr, addr+size) inside a
// lock-protected region: t joins the published read segments of the
// words written (the first handoffWriteWords) whose readers held a mutex
// t holds now in write mode.
func (d *Detector) handoffWrite(t *thread, addr, size uint64) {
	if !d.opts.Handoff || !d.opts.Lib {
		return
	}
	joined := false
	end := min(addr+size, addr+handoffWriteWords*shadow.GranuleSize)
	for a := addr &^ (shadow.GranuleSize - 1); a < end; a += shadow.GranuleSize {
		for _, seg := range d.rdSeg.get(a) {
			if seg != nil && seg.tid != uint16(t.tid) && t.vc.Get(seg.tid) < seg.clock && d.writeHeldBy(seg, t) {
				t.joinSeg(seg)
				joined = true
			}
		}
	}
	if joined {
		d.tick(t)
	}
}

// writeHeldBy reports whether t holds, in write mode, one of the mutexes
// seg was read under: a writer under a read lock may run at the same time
// as the readers, and is ordered after none of them.
func (d *Detector) writeHeldBy(seg *wrSeg, t *thread) bool {
	for _, m := range seg.mutexes {
		if d.locks.Contains(t.writeHeld, m) {
			return true
		}
	}
	return false
}

// handoffWriteWords bounds the words of one write (a free: of the block's
// start) that handoffWrite looks up.
const handoffWriteWords = 64

// rdSegs maps a variable to the segments of the last regions, of up to
// rdWays different threads, that read it: a direct-mapped table without
// locks, like wrSegs. Each entry holds the granule it was published for
// next to the segment (a look-up compares words, not segments' address
// lists); a reader that meets an entry being rewritten (the granule read
// before and after the segment differ) takes it as none.
type rdSegs struct {
	slots [rdSlots][rdWays]rdEntry
	// put takes its slot's stripe: two readers publishing the same
	// variable at once would otherwise pick the same free way, and one
	// of them would be lost (a writer then not ordered after it).
	mu [64]sync.Mutex
}

type rdEntry struct {
	granule atomic.Uint64 // the variable's granule address + 1; 0 for none
	seg     atomic.Pointer[wrSeg]
}

const (
	rdSlots = 1 << 14
	rdWays  = 8
)

// rdSlotOf is the slot of a's granule: reads are recorded at their first
// byte, writes looked up granule by granule.
func rdSlotOf(a uint64) uint64 { return (a >> 2) * 0x9e3779b97f4a7c15 >> 50 }

func granuleKey(a uint64) uint64 { return a&^(shadow.GranuleSize-1) + 1 }

// put makes seg a reader segment of each of its variables, replacing the
// same thread's earlier one, else an entry of another variable, else the
// entry the variable's address picks, whose reader's past the new entry
// then carries (chained: no reader is forgotten, a writer may be ordered
// after more than it needs).
func (r *rdSegs) put(seg *wrSeg) {
	for _, a := range seg.addrs {
		r.putOne(a, seg)
	}
}

// putOne is put for one variable, under its slot's stripe.
func (r *rdSegs) putOne(a uint64, seg *wrSeg) {
	key := granuleKey(a)
	slot := rdSlotOf(a)
	ways := &r.slots[slot]
	mu := &r.mu[slot%uint64(len(r.mu))]
	mu.Lock()
	defer mu.Unlock()
	victim, entry := -1, seg
	for i := range ways { // the same thread's entry for this variable
		if ways[i].granule.Load() == key {
			if old := ways[i].seg.Load(); old == nil || old.tid == seg.tid {
				victim = i
				break
			}
		}
	}
	for i := 0; i < rdWays && victim < 0; i++ { // a free one, or another variable's
		if ways[i].granule.Load() != key {
			victim = i
		}
	}
	if victim < 0 {
		victim = int(a>>2) % rdWays
		if old := ways[victim].seg.Load(); old != nil {
			entry = chained(seg, old, a)
		}
	}
	ways[victim].granule.Store(0)
	ways[victim].seg.Store(entry)
	ways[victim].granule.Store(key)
}

// get is the reader segments published for the granule of a (nil
// entries for none).
func (r *rdSegs) get(a uint64) (out [rdWays]*wrSeg) {
	key := granuleKey(a)
	ways := &r.slots[rdSlotOf(a)]
	for i := range ways {
		if ways[i].granule.Load() != key {
			continue
		}
		seg := ways[i].seg.Load()
		if ways[i].granule.Load() == key {
			out[i] = seg
		}
	}
	return out
}
