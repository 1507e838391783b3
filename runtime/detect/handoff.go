package detect

import (
	"sync"

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
// region ended (a snapshot, never changed), the writer's own epoch in it
// (so a reader that already knows it skips the join), and the mutex whose
// region wrote the variable (0 for a condition variable's signal).
type wrSeg struct {
	vc    *shadow.VC
	tid   uint16
	clock uint64
	mutex uint64
}

// segmentOf snapshots t's current segment for DS, as written in a region
// of mutex.
func (d *Detector) segmentOf(t *thread, mutex uint64) *wrSeg {
	return &wrSeg{vc: t.vc.Copy(), tid: uint16(t.tid), clock: t.vc.Get(uint16(t.tid)), mutex: mutex}
}

// handoffRead runs before t's read at addr inside a lock-protected region:
// if another thread's region under a mutex t holds now wrote addr and
// published it, t joins that region's segment.
func (d *Detector) handoffRead(t *thread, addr uint64) {
	if !d.opts.Handoff || !d.opts.Lib {
		return
	}
	seg := d.wrSeg.get(addr)
	if seg == nil || seg.tid == uint16(t.tid) || t.vc.Get(seg.tid) >= seg.clock || t.depth[seg.mutex] == 0 {
		return
	}
	t.vc.Join(seg.vc)
	d.tick(t)
}

// wrSegs is DS: variable -> the last segment published for it, by a
// signaller that wrote it in its lock-protected region before signalling,
// or by a region that ended. The map is sharded by address: signals, waits
// and unlocks of unrelated threads do not wait for one another.
type wrSegs struct {
	shards [64]wrShard
}

type wrShard struct {
	mu sync.Mutex
	m  map[uint64]*wrSeg
	_  [40]byte // one cache line per shard
}

// maxWRSegs bounds DS. Every published region's writes enter it, so a
// program that writes many locked variables would otherwise grow it
// without end; a full shard starts again (older relations are then lost:
// condition waits fall back to TS_cv, hand-offs go unseen).
const maxWRSegs = 1 << 16

func (w *wrSegs) shard(a uint64) *wrShard { return &w.shards[a>>3%uint64(len(w.shards))] }

// put maps every address of addrs to seg.
func (w *wrSegs) put(addrs []uint64, seg *wrSeg) {
	for _, a := range addrs {
		sh := w.shard(a)
		sh.mu.Lock()
		if sh.m == nil || len(sh.m) > maxWRSegs/len(w.shards) {
			sh.m = map[uint64]*wrSeg{}
		}
		sh.m[a] = seg
		sh.mu.Unlock()
	}
}

// get is the segment published for a, or nil.
func (w *wrSegs) get(a uint64) *wrSeg {
	sh := w.shard(a)
	sh.mu.Lock()
	seg := sh.m[a]
	sh.mu.Unlock()
	return seg
}

// joinInto joins into vc the segments of the addresses that have one and
// reports whether there was any.
func (w *wrSegs) joinInto(vc *shadow.VC, addrs []uint64) bool {
	found := false
	for _, a := range addrs {
		if seg := w.get(a); seg != nil {
			vc.Join(seg.vc)
			found = true
		}
	}
	return found
}
