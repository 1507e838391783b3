package main

/*
#include "hgrt.h"
*/
import "C"

import (
	"sync"
	"sync/atomic"

	"hgrewrite/msm"
	"hgrewrite/runtime/hgopts"
	"hgrewrite/shadow"
)

// detector is the Go side of the runtime: Helgrind+'s hybrid algorithm over
// the events the C side hands over. A thread's own state (vector clock,
// locksets) is touched only by that thread, since every call arrives on the
// thread the event belongs to; shared tables are guarded by mu, shadow
// cells by the shadow memory's striped locks.
type detector struct {
	opts    hgopts.Options
	machine msm.Machine
	bias    uint64 // load bias of the main program (0 unless PIE)

	mem   *shadow.Memory
	locks *shadow.Locksets
	tsets *shadow.Threadsets

	mu       sync.Mutex
	threads  []*thread             // by tid
	handles  map[uint64]int32      // pthread_t -> tid
	syncVC   map[uint64]*shadow.VC // release/acquire objects: cond vars, semaphores, atomics
	barriers map[uint64]*barrier
	wrSeg    *wrSegs // DS of the write/read relation (cond.go)
	rep      reporter
	heap     heapBlocks

	finished       atomic.Bool
	tooManyThreads sync.Once
}

// maxThreads is what a 16-bit thread id in an epoch can name.
const maxThreads = 1 << 16

// thread is the detector's view of one program thread.
type thread struct {
	tid       int32
	vc        *shadow.VC
	held      uint32 // lockset id of all locks held (guards reads)
	writeHeld uint32 // lockset id of locks held in write mode (guards writes)
	parent    int32
	createPC  uint64 // link-time pc of the pthread_create call, 0 if unknown
	exitVC    *shadow.VC
	depth     map[uint64]int      // lock -> times held (recursive mutexes, read locks taken twice)
	env       msm.Env             // env{d, t}, made once: an interface value per access would allocate
	cond      condState           // lock-protected region recording (cond.go)
	pending   []string            // reports waiting for the thread's stack (reporter.emit)
	rec       *C.struct_hg_thread // the thread's C record, set at every flush (cond.go reads its recording)
}

var det *detector

func newDetector(o hgopts.Options, bias uint64) (*detector, error) {
	mem, err := shadow.NewMemory()
	if err != nil {
		return nil, err
	}
	d := &detector{opts: o, bias: bias, mem: mem, locks: shadow.NewLocksets(), tsets: shadow.NewThreadsets(),
		handles: map[uint64]int32{}, syncVC: map[uint64]*shadow.VC{}, barriers: map[uint64]*barrier{},
		wrSeg: new(wrSegs)}
	if o.MSM == "long" {
		d.machine = msm.Long
	}
	d.rep.init(d)
	return d, nil
}

// newThread registers a thread whose vector clock starts from parent's.
func (d *detector) newThread(parent *thread, pc uint64) *thread {
	d.mu.Lock()
	defer d.mu.Unlock()
	t := &thread{tid: int32(len(d.threads)), vc: shadow.NewVC(uint16(len(d.threads))), parent: -1, createPC: pc}
	if parent != nil {
		t.vc = parent.vc.Copy()
		t.parent = parent.tid
	}
	t.env = env{d, t}
	d.tick(t)
	d.threads = append(d.threads, t)
	return t
}

func (d *detector) thread(tid int32) *thread {
	d.mu.Lock()
	defer d.mu.Unlock()
	if tid < 0 || int(tid) >= len(d.threads) {
		return nil
	}
	return d.threads[tid]
}

// tick starts a new segment of t and tells the C fast path (fastfilter.c)
// the new epoch, so that it can skip accesses that cannot change a cell.
func (d *detector) tick(t *thread) {
	t.vc.Tick(uint16(t.tid))
	publishEpoch(t.tid, uint64(t.epoch()))
}

// epoch is TS_t, the current segment of t, as stored in shadow cells:
// tid in bits 44-59, clock in bits 0-39 (bits 60-63 hold the state, 40-43
// the touched mask).
func (t *thread) epoch() msm.Epoch {
	return msm.Epoch(uint64(t.tid)<<44 | t.vc.Get(uint16(t.tid))&clockMask)
}

// clockMask keeps the clock bits of an epoch; bits 40-43 of a cell's word
// 0 hold the granule's touched mask (shadow/split.go).
const clockMask = 1<<40 - 1

func epochTID(e msm.Epoch) uint16 { return uint16(uint64(e) >> 44) }

// lock adds a lock to t's locksets on its first acquisition (write
// also guards writes; read-mode only guards reads, as seed 004 says).
func (d *detector) lock(t *thread, addr uint64, write bool) {
	if t.depth == nil {
		t.depth = map[uint64]int{}
	}
	t.depth[addr]++
	if t.depth[addr] > 1 {
		return
	}
	t.held = d.locks.Add(t.held, addr)
	if write {
		t.writeHeld = d.locks.Add(t.writeHeld, addr)
	}
}

// unlock removes a lock from t's locksets when its last hold is released.
func (d *detector) unlock(t *thread, addr uint64) {
	if t.depth[addr] > 1 {
		t.depth[addr]--
		return
	}
	delete(t.depth, addr)
	t.held = d.locks.Remove(t.held, addr)
	t.writeHeld = d.locks.Remove(t.writeHeld, addr)
}

// barrier tracks the generations of a pthread barrier, so that a thread
// leaving round k acquires what was released in round k only: a slow
// thread must not pick up releases of round k+1 (its own round's accesses
// would look ordered).
type barrier struct {
	count   uint64
	arrived uint64
	gens    map[uint64]*shadow.VC
}

// barrierArrive releases t into its round's clock and returns the round.
func (d *detector) barrierArrive(t *thread, addr uint64) uint64 {
	d.mu.Lock()
	b := d.barriers[addr]
	if b == nil {
		b = &barrier{count: 1}
		d.barriers[addr] = b
	}
	gen := b.arrived / b.count
	b.arrived++
	vc := b.gens[gen]
	if vc == nil {
		if b.gens == nil {
			b.gens = map[uint64]*shadow.VC{}
		}
		vc = new(shadow.VC)
		b.gens[gen] = vc
		delete(b.gens, gen-2) // every thread has left round gen-2 by now
	}
	vc.Join(t.vc)
	d.mu.Unlock()
	d.tick(t)
	return gen
}

func (d *detector) barrierLeave(t *thread, addr, gen uint64) {
	d.mu.Lock()
	if b := d.barriers[addr]; b != nil && b.gens[gen] != nil {
		t.vc.Join(b.gens[gen])
	}
	d.mu.Unlock()
	d.tick(t)
}

// release publishes t's past on obj: TS_obj <- TS_obj joined with TS_t, and t
// starts a new segment.
func (d *detector) release(t *thread, obj uint64) {
	d.mu.Lock()
	vc := d.syncVC[obj]
	if vc == nil {
		vc = new(shadow.VC) // all zero: nothing released yet
		d.syncVC[obj] = vc
	}
	vc.Join(t.vc)
	d.mu.Unlock()
	d.tick(t)
}

// acquire makes t's new segment happen after everything released on obj.
func (d *detector) acquire(t *thread, obj uint64) {
	d.mu.Lock()
	if vc := d.syncVC[obj]; vc != nil {
		t.vc.Join(vc)
	}
	d.mu.Unlock()
	d.tick(t)
}

// env answers the state machines' questions for one access by t.
type env struct {
	d *detector
	t *thread
}

func (e env) HappensBefore(prior msm.Epoch, a msm.Access) bool {
	tid := epochTID(prior)
	if int32(tid) == e.t.tid {
		return true // program order
	}
	return e.t.vc.Get(tid) >= uint64(prior)&clockMask
}

func (e env) Intersect(a, b msm.LocksetID) msm.LocksetID {
	return msm.LocksetID(e.d.locks.Intersect(uint32(a), uint32(b)))
}

func (e env) ThreadOf(p msm.Epoch) msm.ThreadID { return msm.ThreadID(epochTID(p)) }

func (e env) Pair(a, b msm.ThreadID) msm.ThreadsetID {
	return msm.ThreadsetID(e.d.tsets.Pair(uint16(a), uint16(b)))
}

func (e env) AddThread(s msm.ThreadsetID, t msm.ThreadID) msm.ThreadsetID {
	return msm.ThreadsetID(e.d.tsets.Add(uint32(s), uint16(t)))
}

// Shadow cell layout (3 words per 4-byte granule, see package shadow):
//
//	word 0: state (bits 60-63) | TS_d epoch (bits 0-59)
//	word 1: C_d lockset id (low 32) | S_d threadset id (high 32)
//	word 2: previous access: pc (low 32) | tid (16) | flags (8) | size (8)
func loadCell(c *[3]uint64) msm.Cell { return cellOf(c[0], c[1]) }

// cellOf decodes words 0 and 1 of a cell.
func cellOf(w0, w1 uint64) msm.Cell {
	return msm.Cell{State: msm.State(w0 >> 60), TS: msm.Epoch(w0 & (1<<60 - 1) &^ shadow.TouchedMask),
		Locks: msm.LocksetID(uint32(w1)), Threads: msm.ThreadsetID(uint32(w1 >> 32))}
}

// storeCell writes m into c with the touched mask touched (in place).
func storeCell(c *[3]uint64, m msm.Cell, touched uint64) {
	c[1] = uint64(m.Locks) | uint64(m.Threads)<<32
	atomic.StoreUint64(&c[0], uint64(m.State)<<60|uint64(m.TS)&(1<<60-1)&^shadow.TouchedMask|touched)
}

func packPrev(pc uint32, tid int32, flags, size uint8) uint64 {
	return uint64(pc) | uint64(uint16(tid))<<32 | uint64(flags)<<48 | uint64(size)<<56
}

// access runs the state machine on every location an access touches: a
// granule, or the touched bytes of a split granule (shadow/split.go).
func (d *detector) access(t *thread, addr, size uint64, pc uint32, flags uint8) {
	write := flags&flagWrite != 0
	a := msm.Access{Write: write, Thread: msm.ThreadID(t.tid), TS: t.epoch(), Locks: msm.LocksetID(t.held)}
	if write {
		a.Locks = msm.LocksetID(t.writeHeld)
	}
	sz := uint8(min(size, 255))
	end := addr + size
	if end < addr || end > shadow.MaxAddr {
		return
	}
	prevWord := packPrev(pc, t.tid, flags&0xf, sz)
	for g := addr &^ (shadow.GranuleSize - 1); g < end; g += shadow.GranuleSize {
		c := d.mem.Cell(g)
		if c == nil {
			return
		}
		mask := shadow.ByteMask(addr, end, g)
		if d.unchanged(t, c, a, mask) {
			continue
		}
		var r stepResult
		d.mem.Lock(g)
		if !shadow.IsSplit(c) {
			touched := (c[0] & shadow.TouchedMask) >> shadow.TouchedShift
			if touched&mask != 0 || !d.splits(t, c, touched) || d.mem.Split(c) == nil {
				r = d.step(t, c, a, write, prevWord, (touched|mask)<<shadow.TouchedShift)
				d.mem.Unlock(g)
				d.reportStep(t, addr, size, pc, flags, r)
				continue
			}
		}
		side := d.mem.Side(c)
		for b := range side {
			if mask&(1<<b) != 0 && !r.race {
				r = d.step(t, &side[b], a, write, prevWord, shadow.TouchedMask)
			}
		}
		d.mem.Unlock(g)
		d.reportStep(t, addr, size, pc, flags, r)
	}
}

// unchanged reports, without the stripe lock, whether access a to the
// bytes mask of cell c would leave the cell as it is: the usual case for
// data that threads share and keep reading (or writing under the same
// lock) within one segment. Then neither the lock nor the cell's cache
// line is written, which is what makes shared data expensive. The cell is
// read without the lock: if another thread changes it at that moment, this
// access is judged against the state just before, as the C fast path
// does. A step that would report a race is never skipped, and neither is
// one the lazy join rule or a split would change. The previous-access word
// keeps the last access that changed the cell.
func (d *detector) unchanged(t *thread, c *[3]uint64, a msm.Access, mask uint64) bool {
	w0 := atomic.LoadUint64(&c[0])
	if w0>>60 == shadow.StateSplit || (w0&shadow.TouchedMask)>>shadow.TouchedShift&mask != mask {
		return false
	}
	cur := cellOf(w0, atomic.LoadUint64(&c[1]))
	if cur.State == msm.New || msm.HasThreadset(cur.State) && d.tsets.Retired(uint32(cur.Threads)) {
		return false
	}
	if cur.State == msm.ExclWrite && cur.TS == a.TS && !a.Write {
		return true // see step
	}
	if !msm.HasThreadset(cur.State) {
		// Exclusive to another thread (the C fast path takes this
		// thread's own): the access changes the state.
		return false
	}
	next, race := msm.Step(d.machine, cur, a, t.env)
	return !race && next == cur
}

// splits says whether an access by t to bytes of cell c outside its
// touched mask makes the granule split: yes, unless the granule is new or
// still exclusive to t (then the bytes are simply added to it).
func (d *detector) splits(t *thread, c *[3]uint64, touched uint64) bool {
	if touched == 0 {
		return false
	}
	cur := loadCell(c)
	switch cur.State {
	case msm.New:
		return false
	case msm.ExclRead, msm.ExclWrite:
		return int32(epochTID(cur.TS)) != t.tid
	}
	return true
}

// stepResult is what one state-machine step found.
type stepResult struct {
	race bool
	prev uint64 // the cell's previous-access word
	next msm.Cell
}

// step applies access a to cell c (whose stripe lock the caller holds),
// records prevWord as its previous access and leaves the touched mask
// touched (in place) in word 0.
func (d *detector) step(t *thread, c *[3]uint64, a msm.Access, write bool, prevWord, touched uint64) stepResult {
	prev := c[2]
	cur := loadCell(c)
	if cur.State == msm.ExclWrite && cur.TS == a.TS && !write {
		// A read after a write in the same segment: the write still
		// conflicts with parallel reads, so the location stays in
		// Exclusive-Write (the dissertation's machines would move to
		// Exclusive-Read and forget the write). The fast path relies
		// on it too.
		storeCell(c, cur, touched)
		return stepResult{}
	}
	if msm.HasThreadset(cur.State) && d.tsets.Retired(uint32(cur.Threads)) {
		cur = d.afterJoin(cur)
	}
	next, race := msm.Step(d.machine, cur, a, t.env)
	storeCell(c, next, touched)
	c[2] = prevWord
	return stepResult{race: race, prev: prev, next: next}
}

func (d *detector) reportStep(t *thread, addr, size uint64, pc uint32, flags uint8, r stepResult) {
	if r.race {
		d.rep.race(t, addr, size, pc, flags, r.prev, r.next)
	}
}

// afterJoin applies the join rule (ch. 5.1.2) lazily: the cell's threadset
// lost members to joins since it was last touched (shadow.Threadsets.Kill).
// If one thread is left, the location returns to an exclusive state owned
// by that thread: its last access in the cell if the cell names it, else
// its current segment as published for the fast path.
func (d *detector) afterJoin(c msm.Cell) msm.Cell {
	canon := d.tsets.Canon(uint32(c.Threads))
	members := d.tsets.Members(canon)
	if len(members) != 1 {
		return msm.OnJoin(c, msm.ThreadsetID(canon), false, 0)
	}
	survivor := members[0]
	owner := c.TS
	if epochTID(owner) != survivor {
		owner = msm.Epoch(publishedEpoch(int32(survivor)))
	}
	return msm.OnJoin(c, msm.ThreadsetID(canon), true, owner)
}

const (
	flagRead      = 1
	flagWrite     = 2
	flagAtomic    = 4
	flagPost      = 8
	flagAlloc     = 16
	flagFree      = 32
	flagLock      = 64
	flagUnlock    = 128
	flagResetDone = 256
	flagSpin      = 512
	flagHook      = 1024
	flagSignal    = 8192  // hgrt.h HG_SIGNAL
	flagWaitDone  = 16384 // hgrt.h HG_WAITDONE, len: waitInLoop | waitWoke

	waitInLoop = 1
	waitWoke   = 2

	lockRead = 1 // lock event len bits (hgrt.h HG_LOCK_*)
	lockWait = 2
	lockCVM  = 4
	lockBeg  = 8
	lockEnd  = 16

	// accessFree marks, in the flags of an access (and of the cell's
	// previous-access word), the write a free makes; the bit is free
	// there since flagPost never reaches detector.access.
	accessFree = flagPost
)
