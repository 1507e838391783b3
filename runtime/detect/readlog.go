package detect

import (
	"cmp"
	"sync"
	"sync/atomic"
	"unsafe"

	"hgrewrite/shadow"
)

// readLog is the readers' side of reverse hand-offs (handoff.go): for each
// mutex, the reads of the latest region of each thread that read under it.
// A region's reads are published at its unlock, and only a writer that
// holds the same mutex ever looks them up, so they are kept by mutex: one
// way per (mutex, thread) holds the granules the thread's regions read
// and the segment of the latest of them. Publishing a region is then one
// way written under one stripe lock, where keeping them by variable cost
// a table entry per variable read (locks and read-mostly programs read
// far more under their locks than they write).
//
// A thread's later region under the mutex merges into its way: the reads
// of both, under the later segment. So does another thread's region that
// happens after the way's (two threads taking turns on data under its
// mutex keep one way). A writer that wrote what the earlier region read
// is then ordered after the later one, which took the mutex after it:
// no more than a happens-before detector orders through the lock. Past
// readKeys granules, a way stands for every variable (rlAll). When a
// slot's ways are all taken, the least recently written is folded into
// the overflow segment, which every writer under its mutexes joins:
// nothing published is lost.
//
// The ways live outside the Go heap when they can (handoffMemory), where the
// C fast path reads them (runtime/fastpath.c, hg_readers_news): a write
// in a region that no way of a held mutex has news for is settled there.
type readLog struct {
	alloc     sync.Once
	bits      uint
	ways      []rlWay        // 1<<bits slots of rlWays, by mutex
	refs      []rlRef        // each way's segment but for its epoch, which the way keeps
	used      []uint32       // each way's last write, in puts to its slot (under the stripe)
	puts      []uint32       // per slot
	mu        [64]sync.Mutex // put takes its slot's stripe
	ready     atomic.Bool    // the fields above are set: news may read them (a look-up does not go through alloc)
	over      overflow       // the evicted ways folded together (segtable.go)
	published func(base uintptr)
	snapAt    func(tid uint16, clock uint64, have *shadow.VC) *shadow.VC // segTable.snapAt's, for ways with rlCMade
}

// The reader log's shape, which the C side reads (runtime/hgabi.h).
const (
	ReadLogWays = 8       // ways per slot
	ReadLogKeys = 32      // granules a way keeps (a region records HG_REC reads)
	ReadLogAll  = 1 << 63 // a way's n: it stands for every variable
	ReadLogBits = 10      // 1<<ReadLogBits slots
)

const (
	rlWays   = ReadLogWays
	readKeys = ReadLogKeys
	rlAll    = ReadLogAll
)

// rlWay is one (mutex, thread) way, laid out for the C side (struct
// hg_rlway). A writer takes the way by making seq odd (lock), writes the
// rest, and makes seq even again; a Go reader that sees seq odd or
// changed reads again (newsAt), the C side's takes the way as news. The
// Go side's writers take the slot's stripe too. The C side writes the
// way a region of its thread publishes into, as putUnder would pick it
// (runtime/regionpub.c: the thread's own way of the mutex, another one
// its clock covers, or a free one): the reads it adds, and the epoch; so
// the way's epoch, not its segment's clock, says which of the thread's
// segments the way holds (seg). When the thread's own way was published
// before the thread's last join, or the way was another's or free, the
// C side sets rlCMade: the way's clock is then in its thread's snapshot
// ring, as for the published writes' ways (slotMeta.cmade, materialize).
type rlWay struct {
	seq   seqWord
	mutex atomic.Uint64 // 0: free
	epoch atomic.Uint64 // of the segment (shadow.MakeEpoch)
	n     atomic.Uint64 // keys held, or rlAll
	keys  [readKeys]atomic.Uint64
	flags atomic.Uint64 // rlCMade
}

// rlCMade is the flag of a way whose segment the C side wrote (rlWay).
const rlCMade = 1

// rlRef is a way's segment but for its epoch (vc nil: none), written and
// read under the way's seq like the rest of the way: a segment per region
// published, allocated, was most of a lock-heavy program's garbage.
type rlRef struct {
	vc    atomic.Pointer[shadow.VC]
	mutex atomic.Uint64
	more  atomic.Pointer[segMore]
}

func newReadLog(bits uint, published func(base uintptr)) *readLog {
	return &readLog{bits: bits, published: published}
}

// init maps the ways on first use: a program that never reads under a
// lock does not pay for them.
func (r *readLog) init() {
	r.alloc.Do(func() {
		n := (1 << r.bits) * rlWays
		var base uintptr
		r.over.head, r.ways, base = handoffMemory[rlWay](n)
		r.refs = make([]rlRef, n)
		r.over.head.refs.Store(uintptr(unsafe.Pointer(unsafe.SliceData(r.refs))))
		r.used = make([]uint32, n)
		r.puts = make([]uint32, 1<<r.bits)
		r.ready.Store(true)
		if r.published != nil {
			r.published(cmp.Or(base, HandoffInHeap))
		}
	})
}

// slot is mutex m's first way (runtime/fastpath.c computes it too).
func (r *readLog) slot(m uint64) int {
	return int(segSlotIndex(m, r.bits)) * rlWays
}

// put publishes the reads addrs of seg's region under each of its
// mutexes; all says the region read more than addrs (a scan of a table
// longer than a record keeps): its reads stand for every variable.
func (r *readLog) put(seg *wrSeg, addrs []uint64, all bool) {
	if len(addrs) == 0 {
		return
	}
	r.init()
	for m := range seg.mutexes() {
		r.putUnder(m, seg, addrs, all)
	}
}

func (r *readLog) putUnder(m uint64, seg *wrSeg, addrs []uint64, all bool) {
	base := r.slot(m)
	mu := &r.mu[(base/rlWays)%len(r.mu)]
	mu.Lock()
	defer mu.Unlock()
	var ks wayKeys
	target := -1
	for target < 0 {
		var free int
		ks, target, free = r.pick(base, m, seg, all)
		for _, a := range addrs {
			if ks.all {
				break
			}
			ks.add(granuleKey(a))
		}
		switch {
		case target >= 0:
		case free >= 0:
			// the C side takes free ways too (runtime/regionpub.c),
			// without the stripe: one it took meanwhile is its own
			w := &r.ways[free]
			w.seq.lock()
			if w.mutex.Load() == 0 {
				target = free
			} else {
				w.seq.unlock()
			}
		default:
			target = r.evict(base)
		}
	}
	r.puts[base/rlWays]++
	r.used[target] = r.puts[base/rlWays]
	w := &r.ways[target]
	if ks.all {
		w.n.Store(rlAll)
	} else {
		for j := range ks.n {
			w.keys[j].Store(ks.keys[j])
		}
		w.n.Store(uint64(ks.n))
	}
	w.epoch.Store(uint64(seg.epoch))
	ref := &r.refs[target]
	storeSeg(&ref.vc, &ref.mutex, seg)
	if ref.more.Load() != seg.more {
		ref.more.Store(seg.more)
	}
	if w.flags.Load() != 0 {
		w.flags.Store(0)
	}
	w.mutex.Store(m)
	w.seq.unlock()
}

// pick finds, under the slot's stripe, the way of mutex m that seg's
// region merges into (target, taken, its reads and those of the other
// ways of m that happen before seg gathered in ks; -1 for none), else a
// free way (free, not taken; -1 for none).
func (r *readLog) pick(base int, m uint64, seg *wrSeg, all bool) (ks wayKeys, target, free int) {
	ks = wayKeys{all: all}
	target, free = -1, -1
	for i := base; i < base+rlWays; i++ {
		w := &r.ways[i]
		switch wm := w.mutex.Load(); {
		case wm == 0:
			if free < 0 {
				free = i
			}
		case wm == m:
			w.seq.lock() // the C side may be moving its epoch on
			if !r.covered(i, seg) {
				w.seq.unlock()
				continue
			}
			// seg's region happens after this way's: it takes the
			// way's reads (its own thread's earlier regions, or another
			// thread's before it)
			ks.merge(w)
			if target < 0 {
				target = i // written by putUnder, still taken
			} else {
				r.empty(i)
				w.seq.unlock()
			}
		}
	}
	return ks, target, free
}

// wayKeys gathers the granules of a way being written: at most readKeys
// distinct ones, else every variable (all), after which nothing more is
// gathered (a lock-heavy program's ways are mostly there: locks.c's
// stripes read more than 32 nodes each).
type wayKeys struct {
	keys [readKeys]uint64
	n    int
	all  bool
}

// merge takes the granules of way w.
func (ks *wayKeys) merge(w *rlWay) {
	wn := w.n.Load()
	if wn == rlAll {
		ks.all = true
	}
	for j := uint64(0); j < wn && !ks.all; j++ {
		ks.add(w.keys[j].Load())
	}
}

func (ks *wayKeys) add(k uint64) {
	if ks.all {
		return
	}
	for _, x := range ks.keys[:ks.n] {
		if x == k {
			return
		}
	}
	if ks.n == readKeys {
		ks.all = true
		return
	}
	ks.keys[ks.n] = k
	ks.n++
}

// seg is way i's segment (ok false for a free way): the one published
// there, at the way's epoch, which the C side moves on (the same past but
// for the thread's own clock: regionpub.c). The caller has the way, or reads
// it between two equal even seqs.
func (r *readLog) seg(i int) (seg wrSeg, ok bool) {
	w := &r.ways[i]
	seg.epoch = shadow.Epoch(w.epoch.Load())
	if w.flags.Load()&rlCMade != 0 {
		// a region under this mutex alone (runtime/regionpub.c)
		seg.vc, seg.mutex = r.snapAt(seg.tid(), seg.clock(), nil), w.mutex.Load()
		return seg, seg.vc != nil
	}
	ref := &r.refs[i]
	seg.vc, seg.mutex, seg.more = ref.vc.Load(), ref.mutex.Load(), ref.more.Load()
	return seg, seg.vc != nil
}

// covered reports whether way i's segment happens before seg (the way
// taken, under the stripe).
func (r *readLog) covered(i int, seg *wrSeg) bool {
	if _, ok := r.seg(i); !ok {
		return false
	}
	e := shadow.Epoch(r.ways[i].epoch.Load())
	return e.TID() == seg.tid() || seg.vc.Get(e.TID()) >= e.Clock()
}

// empty frees way i (taken, under the stripe).
func (r *readLog) empty(i int) {
	r.ways[i].mutex.Store(0)
	r.ways[i].flags.Store(0)
	r.refs[i].vc.Store(nil)
	r.refs[i].more.Store(nil)
}

// materializeAll materializes every way the C side moved on for thread
// tid (segTable.materializeAll).
func (r *readLog) materializeAll(tid uint16) {
	if !r.ready.Load() {
		return
	}
	for i := range r.ways {
		if r.ways[i].flags.Load()&rlCMade != 0 {
			r.materialize(i, tid, nil)
		}
	}
}

// materialize puts in way i the clock it keeps in its thread's snapshot
// ring, if the C side moved the way on for thread tid and it keeps it
// there still (rlCMade), as segTable.materialize.
func (r *readLog) materialize(i int, tid uint16, have *shadow.VC) *shadow.VC {
	if !r.ready.Load() || i < 0 || i >= len(r.ways) {
		return have
	}
	w := &r.ways[i]
	w.seq.lock()
	defer w.seq.unlock()
	e := shadow.Epoch(w.epoch.Load())
	if w.flags.Load()&rlCMade == 0 || e.TID() != tid {
		return have
	}
	vc := r.snapAt(tid, e.Clock(), have)
	ref := &r.refs[i]
	ref.vc.Store(vc)
	ref.mutex.Store(w.mutex.Load())
	ref.more.Store(nil)
	w.flags.Store(0)
	return vc
}

// evict frees a way of the full slot at base and returns it taken: one
// whose segment the overflow already covers, else the least recently
// written one, folded into the overflow.
func (r *readLog) evict(base int) int {
	over := r.over.Load()
	victim := -1
	puts := r.puts[base/rlWays]
	for i := base; i < base+rlWays; i++ {
		if seg, ok := r.seg(i); over != nil && (!ok || over.covers(&seg)) {
			victim = i
			break
		}
		// the C side's writes leave no mark in used: a way it wrote
		// for its thread's current snapshot (rlCMade) is recent, and
		// goes last
		if r.ways[i].flags.Load()&rlCMade == 0 && (victim < 0 || puts-r.used[i] > puts-r.used[victim]) {
			victim = i
		}
	}
	if victim < 0 {
		victim = base // every way was written by the C side lately
	}
	r.ways[victim].seq.lock()
	if seg, ok := r.seg(victim); ok && (over == nil || !over.covers(&seg)) {
		r.over.fold(&seg)
	}
	r.empty(victim)
	return victim
}

// news puts in out each segment published under mutex m, for a region
// that read a granule of [lo, hi) (granule-aligned lo), that t does not
// know yet, and returns how many, and the overflow (nil while none).
func (r *readLog) news(t *thread, m, lo, hi uint64, out *[rlWays]wrSeg) (n int, over *wrSeg) {
	if !r.ready.Load() {
		return 0, nil // nothing published yet
	}
	base := r.slot(m)
	for i := base; i < base+rlWays; i++ {
		if seg, ok := r.newsAt(i, t, m, lo, hi); ok {
			out[n] = seg
			n++
		}
	}
	return n, r.over.Load()
}

// newsAt is way i's segment if news reports it. A way being written is
// waited for: its thread may materialize it at any time (publications
// under m itself are waited for before the region began).
func (r *readLog) newsAt(i int, t *thread, m, lo, hi uint64) (seg wrSeg, ok bool) {
	w := &r.ways[i]
	for {
		s := w.seq.stable()
		if w.mutex.Load() != m {
			return seg, false
		}
		e := shadow.Epoch(w.epoch.Load())
		if e.TID() == uint16(t.tid) || t.vc.HappensBefore(e) || !w.reads(lo, hi) {
			if w.seq.Load() == s {
				return seg, false
			}
			continue
		}
		if seg, ok = r.seg(i); w.seq.Load() == s {
			return seg, ok
		}
	}
}

// reads reports whether the way holds a granule of [lo, hi).
func (w *rlWay) reads(lo, hi uint64) bool {
	n := w.n.Load()
	if n == rlAll {
		return true
	}
	for j := range min(n, readKeys) {
		if g := w.keys[j].Load() - 1; g >= lo && g < hi {
			return true
		}
	}
	return false
}
