package detect

import (
	"cmp"
	"sync"
	"sync/atomic"

	"hgrewrite/abi"
	"hgrewrite/shadow"
)

// Release publishes thread tid's past on the synchronisation object at
// addr (sem_post, pthread_once's initialiser). Ignored with lib=no.
func (d *Detector) Release(tid int32, addr uint64) {
	if t := d.thread(tid); t != nil && d.opts.Lib {
		d.release(t, addr)
	}
}

// Acquire makes thread tid's next segment happen after everything released
// on addr (sem_wait, pthread_once's callers). Ignored with lib=no.
func (d *Detector) Acquire(tid int32, addr uint64) {
	if t := d.thread(tid); t != nil && d.opts.Lib {
		d.acquire(t, addr)
	}
}

// release publishes t's past on obj: TS_obj <- TS_obj joined with TS_t, and t
// starts a new segment.
func (d *Detector) release(t *thread, obj uint64) {
	d.syncVC.release(t, obj)
	d.tick(t)
}

// acquire makes t's new segment happen after everything released on obj.
func (d *Detector) acquire(t *thread, obj uint64) {
	d.syncVC.joinInto(t, obj)
	d.tick(t)
}

// syncClocks is TS_obj of every synchronisation object released on
// (condition variables, semaphores, the words of atomic instructions,
// descriptors, futex words), by address, under a mutex per shard of
// addresses. Under the detector's one mutex, every atomic instruction
// and every signal of every thread took the same cache line.
//
// Each release also stamps the object's slot in a table the C fast path
// reads (SyncStamps, runtime/fastpath.c): the slot's stamp grows by one,
// then its key names the object. A thread that acquired the object, or
// released it with nothing released by others since its last acquire,
// is told the stamp (Region.KnowAcquired): until the stamp moves, the
// object's clock holds nothing the thread's does not, and the acquire
// half of its next atomic instruction on the word needs no call into Go
// (hg_acquire_known). A thread told so at a release of its own, that has
// joined nothing since, holds the object's clock exactly but for its
// own component; its next release there is made by the C side
// (hg_release_known), which leaves its epoch in the slot (pend) and
// moves the stamp: the Go side folds it into the object's clock before
// it next reads or joins that clock. A thread that increments its own
// counter with a locked instruction made two calls into Go per
// increment before, none after its first.
//
// The slot also holds the object's clock, when it is small enough
// (keepSmall): with it the C side makes the releases and acquires of
// words that threads share itself, writing the clock back for the Go
// side to fold in (abi.SyncSmallC) and raising the thread's clock by
// events (abi.ClockRaise).
type syncClocks struct {
	shards [syncShards]syncShard
	stamps []syncStamp // 1 << syncStampBits slots, outside the Go heap when it could be mapped
}

// syncStamp is a slot of the release stamps, laid out as the C side's
// struct hg_sync_stamp. Its writers, the Go side's under the shard's
// mutex, take seq (odd while taken).
type syncStamp struct {
	key, stamp atomic.Uint64
	seq        seqWord
	pend       atomic.Uint64 // a release made in C on key's object: tid << 48 | clock, 0 if none
	// key's clock for the C side's releases and acquires (hg_exchange_c,
	// hg_release_c, hg_acquire_c): meta's low byte counts the components in small, each
	// tid << 48 | clock, with abi.SyncSmallValid when they are the clock
	// whole (but for pend), abi.SyncSmallC when the C side wrote them
	meta  atomic.Uint64
	small [abi.SyncSmall]atomic.Uint64
}

const (
	syncShards    = 64
	syncStampBits = 12
)

type syncShard struct {
	mu sync.Mutex
	m  map[uint64]*shadow.VC
	_  [112]byte // no two shards' locks on one cache line
}

// init maps the stamps and tells the fast path where they are.
func (s *syncClocks) init(host Host) {
	_, stamps, base := handoffMemory[syncStamp](1 << syncStampBits)
	s.stamps = stamps
	host.PublishHandoffTable(SyncStamps, cmp.Or(base, HandoffInHeap), syncStampBits)
}

// lock takes obj's slot, and its shard's mutex: the slot's writers in Go
// hold one mutex, the C side's take the slot's word. A release the C
// side left in the slot goes into its object's clock.
func (s *syncClocks) lock(obj uint64) (*syncShard, *syncStamp) {
	i := segSlotIndex(obj, syncStampBits) // the C side's hg_hash(obj >> 2)
	sh, st := &s.shards[i%syncShards], &s.stamps[i]
	sh.mu.Lock()
	st.seq.lock()
	if p := st.pend.Load(); p != 0 {
		if c := sh.m[st.key.Load()]; c != nil {
			tid, clock := uint16(p>>48), p&(1<<48-1)
			c.Set(tid, max(c.Get(tid), clock))
		}
		st.pend.Store(0)
	}
	if m := st.meta.Load(); m&abi.SyncSmallC != 0 {
		c := sh.clock(st.key.Load())
		for i := range min(int(m&0xff), abi.SyncSmall) {
			p := st.small[i].Load()
			tid, clock := uint16(p>>48), p&(1<<48-1)
			c.Set(tid, max(c.Get(tid), clock))
		}
		st.meta.Store(m &^ abi.SyncSmallC)
	}
	return sh, st
}

// clock is obj's clock, made (all zero: nothing released yet) if obj has
// none; the caller holds the shard's mutex.
func (sh *syncShard) clock(obj uint64) *shadow.VC {
	c := sh.m[obj]
	if c == nil {
		if sh.m == nil {
			sh.m = map[uint64]*shadow.VC{}
		}
		c = new(shadow.VC)
		sh.m[obj] = c
	}
	return c
}

// unlockSlot gives the slot back with its key's clock in it for the C
// side (keepSmall).
func unlockSlot(sh *syncShard, st *syncStamp) {
	st.keepSmall(sh.m[st.key.Load()])
	st.seq.unlock()
	sh.mu.Unlock()
}

// keepSmall writes clock c (nil: nothing released) into the slot's
// components, or marks them not valid when c has more than
// abi.SyncSmall. The C side's releases and acquires read them
// (runtime/fastpath.c, hg_slot_clock).
func (st *syncStamp) keepSmall(c *shadow.VC) {
	n, size := 0, 0
	if c != nil {
		size = c.Len()
	}
	for i := range size {
		clock := c.Get(uint16(i))
		if clock == 0 {
			continue
		}
		if n == abi.SyncSmall || clock >= 1<<48 {
			st.meta.Store(0)
			return
		}
		st.small[n].Store(uint64(i)<<48 | clock)
		n++
	}
	st.meta.Store(uint64(n) | abi.SyncSmallValid)
}

// release joins t's clock into obj's and stamps obj's slot. If t knew
// obj's clock whole before (its last acquire, or release, of obj had the
// stamp the slot still has), it knows it still, and then holds it
// exactly, but for its own component, until it joins another clock.
func (s *syncClocks) release(t *thread, obj uint64) {
	sh, st := s.lock(obj)
	sh.clock(obj).Join(t.vc)
	before := st.stamp.Load()
	knew := st.key.Load() == obj && t.acquired(obj) == before
	st.stamp.Store(before + 1)
	st.key.Store(obj)
	if knew {
		t.knowAcquired(obj, before+1, t.vc.Get(uint16(t.tid)))
	}
	unlockSlot(sh, st)
}

// exchange is an atomic read-modify-write's release half, made with its
// acquire half at once: t's clock joins obj's and obj's joins t's, and
// t, which then holds obj's clock exactly, is told the new stamp. The
// instruction follows at once: if no other thread releases on obj
// first, the acquire half, after it, finds the stamp unmoved and needs
// no call into Go (the C side's hg_acquire_known); if one does, it comes
// here after all. Made apart, the two halves were two calls into Go for
// every read-modify-write of a word that threads share (a reference
// count: std::shared_ptr's copies). The first only for an instruction
// whose acquire half follows (a locked instruction, not a store that may
// be a spin variable's counterpart).
func (s *syncClocks) exchange(t *thread, obj uint64) {
	sh, st := s.lock(obj)
	c := sh.clock(obj)
	if !c.LessEq(t.vc) {
		t.join(c)
	}
	c.Join(t.vc)
	st.stamp.Add(1)
	st.key.Store(obj)
	t.knowAcquired(obj, st.stamp.Load(), t.vc.Get(uint16(t.tid)))
	unlockSlot(sh, st)
}

// joinInto joins obj's clock, if anything was released on obj, into t's,
// and tells t the stamp of what it took in. A slot that names another
// object is stamped for obj (a release of nothing), so that a thread
// polling a word nobody released yet learns a stamp too.
func (s *syncClocks) joinInto(t *thread, obj uint64) {
	sh, st := s.lock(obj)
	if c := sh.m[obj]; c != nil {
		t.join(c)
	}
	if st.key.Load() != obj {
		st.stamp.Add(1)
		st.key.Store(obj)
	}
	t.knowAcquired(obj, st.stamp.Load(), 0)
	unlockSlot(sh, st)
}

// acquired is the release stamp of obj that t's clock holds, 0 if it
// knows none.
func (t *thread) acquired(obj uint64) uint64 {
	if a := t.syncKnown[obj>>3%abi.SyncKnown]; a.obj == obj {
		return a.stamp
	}
	return 0
}

// knowAcquired records that t's clock holds obj's releases up to stamp,
// here and in t's record; exact is t's own clock when t's clock became
// obj's but for that component (a release), 0 if it may hold more.
func (t *thread) knowAcquired(obj, stamp, exact uint64) {
	t.syncKnown[obj>>3%abi.SyncKnown] = acquiredStamp{obj, stamp}
	if t.rec != nil {
		t.rec.KnowAcquired(obj, stamp, exact)
	}
}

// acquiredStamp is an entry of thread.syncKnown.
type acquiredStamp struct{ obj, stamp uint64 }

// barrier tracks the generations of a pthread barrier, so that a thread
// leaving round k acquires what was released in round k only: a slow
// thread must not pick up releases of round k+1 (its own round's accesses
// would look ordered).
type barrier struct {
	count   uint64
	arrived uint64
	gens    map[uint64]*shadow.VC
}

// BarrierInit starts counting the rounds of the barrier at addr, which
// count threads pass together (pthread_barrier_init).
func (d *Detector) BarrierInit(addr, count uint64) {
	if count == 0 {
		count = 1
	}
	d.mu.Lock()
	d.barriers[addr] = &barrier{count: count}
	d.mu.Unlock()
}

// BarrierArrive releases thread tid into the round of the barrier at addr
// it arrives in, before it waits, and returns the round for BarrierLeave.
func (d *Detector) BarrierArrive(tid int32, addr uint64) uint64 {
	if t := d.thread(tid); t != nil && d.opts.Lib {
		return d.barrierArrive(t, addr)
	}
	return 0
}

// BarrierLeave makes thread tid, back from the wait, acquire what round gen
// of the barrier at addr released.
func (d *Detector) BarrierLeave(tid int32, addr, gen uint64) {
	if t := d.thread(tid); t != nil && d.opts.Lib {
		d.barrierLeave(t, addr, gen)
	}
}

// barrierArrive releases t into its round's clock and returns the round.
func (d *Detector) barrierArrive(t *thread, addr uint64) uint64 {
	d.mu.Lock()
	b := d.barriers[addr]
	if b == nil {
		b = &barrier{count: 1}
		d.barriers[addr] = b
	}
	gen := b.arrived / b.count
	b.arrived++
	b.round(gen).Join(t.vc)
	d.mu.Unlock()
	d.tick(t)
	return gen
}

// round is the clock of round gen, made on its first arrival (under d.mu).
func (b *barrier) round(gen uint64) *shadow.VC {
	vc := b.gens[gen]
	if vc == nil {
		if b.gens == nil {
			b.gens = map[uint64]*shadow.VC{}
		}
		vc = new(shadow.VC)
		b.gens[gen] = vc
		delete(b.gens, gen-2) // every thread has left round gen-2 by now
	}
	return vc
}

func (d *Detector) barrierLeave(t *thread, addr, gen uint64) {
	d.mu.Lock()
	if b := d.barriers[addr]; b != nil && b.gens[gen] != nil {
		t.join(b.gens[gen])
	}
	d.mu.Unlock()
	d.tick(t)
}
