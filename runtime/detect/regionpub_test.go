package detect

import (
	"testing"

	"hgrewrite/shadow"
)

// The C side publishes lock-protected regions itself
// (runtime/regionpub.c): its ways name their clock by their epoch alone,
// an entry of the epoch's thread's snapshot ring (Host.SnapshotAt), until
// the thread ends and the Go side writes the clock into each of them
// (thread.materialize). These tests write the ways as the C side does,
// and the rings as the fake host keeps them (snapRings).

// cPut is runtime/regionpub.c's hg_write_publish: key's way, or a free
// one, takes the epoch (tid, clock) and mutex m, its clock in tid's
// snapshot ring. It returns the way's index in the table.
func cPut(st *segTable, key uint64, tid uint16, clock, m uint64) uint32 {
	s := st.slot(key)
	s.meta.seq.lock()
	defer s.meta.seq.unlock()
	v := -1
	for i := range s.ways {
		if k := s.ways[i].key.Load(); k == key || (k == 0 && v < 0) {
			v = i
			if k == key {
				break
			}
		}
	}
	if v < 0 {
		panic("no way for the C side")
	}
	same := s.ways[v].key.Load() == key
	if !same {
		s.ways[v].key.Store(0)
	}
	s.meta.mutex[v].Store(m)
	s.meta.cmade.Store(s.meta.cmade.Load() | 1<<v)
	s.ways[v].epoch.Store(uint64(shadow.MakeEpoch(tid, clock)))
	s.ways[v].key.Store(key)
	return uint32(segSlotIndex(key, st.bits))*segWays + uint32(v)
}

func vcOf(comps map[uint16]uint64) *shadow.VC {
	vc := new(shadow.VC)
	for tid, c := range comps {
		vc.Set(tid, c)
	}
	return vc
}

// A way written in C finds its clock in its thread's snapshot ring by its
// epoch: an entry pushed later (the thread joined since) does not change
// it. Materialized, it keeps that clock; a way the Go side rewrites is
// the Go side's.
func TestSegTableCMadeWay(t *testing.T) {
	st := newSegTable(0, nil)
	var rings snapRings
	st.snapAt = rings.at
	st.put(8, segAt(1, 1, 0x100), false) // the Go side makes the table
	rings.push(2, 5, vcOf(map[uint16]uint64{2: 5, 3: 9}))
	w := cPut(st, 16, 2, 5, 0x200)
	rings.push(2, 6, vcOf(map[uint16]uint64{2: 6, 3: 20})) // thread 2 joined later
	seg, ok := st.find(16)
	if !ok || seg.vc.Get(3) != 9 || seg.vc.Get(2) != 5 || seg.clock() != 5 || seg.tid() != 2 || seg.mutex != 0x200 || seg.more != nil {
		t.Fatalf("the C side's way came back as %+v, %v", seg, ok)
	}
	st.materialize(w, 3, nil) // another thread's materialization leaves it
	if st.slot(16).meta.cmade.Load() == 0 {
		t.Fatal("another thread's materialization took the way")
	}
	st.materialize(w, 2, nil)
	if st.slot(16).meta.cmade.Load() != 0 {
		t.Fatal("the way still names its thread's ring")
	}
	rings.push(2, 7, vcOf(map[uint16]uint64{2: 7, 3: 30}))
	if seg, ok = st.find(16); !ok || seg.vc.Get(3) != 9 || seg.clock() != 5 {
		t.Fatalf("materialized, the way came back as %+v, %v", seg, ok)
	}
	// a way the Go side rewrites is its own again
	w = cPut(st, 24, 2, 7, 0x200)
	st.put(24, segAt(4, 1, 0x400), false)
	st.materialize(w, 2, nil)
	if seg, ok = st.find(24); !ok || seg.tid() != 4 || seg.vc.Get(3) == 30 || seg.mutex != 0x400 {
		t.Fatalf("the Go side's put came back as %+v, %v", seg, ok)
	}
}

// A reader-log way the C side moved on past its thread's join finds its
// clock in the thread's ring, until materialized.
func TestReadLogCMadeWay(t *testing.T) {
	r := newReadLog(0, nil)
	var rings snapRings
	r.snapAt = rings.at
	const m = 0x7000
	r.put(readerSeg(1, 5, m, nil), []uint64{0x1000}, false)
	rings.push(1, 8, vcOf(map[uint16]uint64{1: 8, 3: 7})) // thread 1 joined thread 3 since
	i := r.slot(m)
	w := &r.ways[i]
	w.seq.lock()
	w.flags.Store(rlCMade)
	w.epoch.Store(uint64(shadow.MakeEpoch(1, 9)))
	w.seq.unlock()
	rings.push(1, 12, vcOf(map[uint16]uint64{1: 12, 3: 30}))
	got := found(r, writerOf(2), m, 0x1000, 0x1004)
	if len(got) != 1 || got[0].vc.Get(3) != 7 || got[0].clock() != 9 || got[0].mutex != m {
		t.Fatalf("a writer found %+v", got)
	}
	r.materialize(i, 1, nil)
	rings.push(1, 13, vcOf(map[uint16]uint64{1: 13, 3: 40}))
	got = found(r, writerOf(2), m, 0x1000, 0x1004)
	if len(got) != 1 || got[0].vc.Get(3) != 7 || got[0].clock() != 9 || w.flags.Load() != 0 {
		t.Fatalf("materialized, a writer found %+v", got)
	}
}

// cThread makes a thread whose C side has published under its current
// clock (its snapshot ring holds it), after the Go side made the
// published writes' table.
func cThread(b *bench) (int32, *thread) {
	tid := b.create(0, 0x100)
	b.flush(tid)
	th := b.d.thread(tid)
	b.host.snaps.push(uint16(tid), th.vc.Get(uint16(tid)), th.vc)
	b.d.wrSeg.table.put(wrKey(0x9000), segAt(0, 1, 0x500), false)
	return tid, th
}

// A thread's join leaves the ways the C side published for it as they
// are: they find the clock of their region, not the one the thread
// joined later.
func TestJoinKeepsCMadeWays(t *testing.T) {
	b := newBench(t, "")
	t1, th := cThread(b)
	t2 := b.create(0, 0x200)
	clock := th.vc.Get(uint16(t1))
	before := th.vc.Copy()
	cPut(b.d.wrSeg.table, wrKey(0x8000), uint16(t1), clock, 0x500)
	th.join(vcOf(map[uint16]uint64{uint16(t2): 50}))
	b.d.tick(th)
	b.host.snaps.push(uint16(t1), th.vc.Get(uint16(t1)), th.vc)
	seg, ok := b.d.wrSeg.get(0x8000)
	if !ok || seg.vc.Get(uint16(t2)) == 50 || seg.clock() != clock || !seg.vc.LessEq(before) {
		t.Fatalf("after the join the way came back as %+v, %v", seg, ok)
	}
}

// Readers never take a way's clock for less than its region's (run with
// -race too): a thread publishes in C at clock after clock, each with a
// new entry in its ring (component 2 is ten times its own), and every
// segment a reader finds has at least its region's component 2 (more
// once the ring went round: a later entry stands in).
func TestSegTableCMadeConcurrentReaders(t *testing.T) {
	st := newSegTable(0, nil)
	var rings snapRings
	st.snapAt = rings.at
	st.put(8, segAt(2, 1, 0x100), false)
	const key, rounds = 16, 20000
	reader := shadow.NewVC(3)
	concurrently(1, func(int) {
		for i := uint64(1); i <= rounds; i++ {
			rings.push(1, i, vcOf(map[uint16]uint64{1: i, 2: 10 * i}))
			w := cPut(st, key, 1, i, 0x100)
			if i%100 == 0 {
				st.materialize(w, 1, nil)
			}
		}
	}, func() {
		if seg, ok, _ := st.news(key, 3, reader); ok && (seg.vc.Get(2) < 10*seg.clock() || seg.vc.Get(1) != seg.clock()) {
			t.Errorf("epoch clock %d resolved to a clock of %d, %d", seg.clock(), seg.vc.Get(1), seg.vc.Get(2))
		}
	})
}

// A thread's call into Go materializes the ways the C side published
// for it (the record's list) once the list or the thread's ring is half
// full, and its end does whatever: the ring keeps only the entries they
// may name until then.
func TestCallMaterializesCMadeWays(t *testing.T) {
	for _, later := range []bool{false, true} {
		testCallMaterializes(t, later)
	}
}

func testCallMaterializes(t *testing.T, later bool) {
	b := newBench(t, "")
	t1, th := cThread(b)
	clock := th.vc.Get(uint16(t1))
	w := cPut(b.d.wrSeg.table, wrKey(0x8000), uint16(t1), clock, 0x500)
	r := b.region(t1)
	r.cmade, r.cmadeLater = append(r.cmade, fakeWay{HandoffWrites, w}), later
	b.flush(t1)
	if cmade := b.d.wrSeg.table.slot(wrKey(0x8000)).meta.cmade.Load(); (cmade != 0) != later || (len(r.cmade) != 0) != later {
		t.Fatalf("later %v: after the flush, the way's bit %#x, %d ways listed", later, cmade, len(r.cmade))
	}
	b.d.ThreadExit(t1)
	if b.d.wrSeg.table.slot(wrKey(0x8000)).meta.cmade.Load() != 0 || len(r.cmade) != 0 {
		t.Fatalf("later %v: the way still names its thread's ring after its end", later)
	}
	for i := range uint64(snapRingLen) { // the ring goes round
		b.host.snaps.push(uint16(t1), clock+100+i, vcOf(map[uint16]uint64{5: 77}))
	}
	if seg, ok := b.d.wrSeg.get(0x8000); !ok || seg.vc.Get(5) == 77 || seg.clock() != clock {
		t.Fatalf("later %v: the way came back as %+v, %v", later, seg, ok)
	}
}

// cTakeFree is runtime/regionpub.c's take of a free reader-log way for
// thread tid's region under m (no stripe, only the way's seq): it
// reports whether it took one, and which.
func cTakeFree(r *readLog, m uint64, tid uint16, clock uint64) (int, bool) {
	base := r.slot(m)
	for i := base; i < base+rlWays; i++ {
		w := &r.ways[i]
		s := w.seq.Load()
		if s&1 != 0 || w.mutex.Load() != 0 || !w.seq.CompareAndSwap(s, s+1) {
			continue
		}
		if w.mutex.Load() != 0 {
			w.seq.Store(s + 2)
			continue
		}
		w.n.Store(rlAll)
		w.mutex.Store(m)
		w.flags.Store(rlCMade)
		w.epoch.Store(uint64(shadow.MakeEpoch(tid, clock)))
		w.seq.Store(s + 2)
		return i, true
	}
	return 0, false
}

// The Go side's put takes a free way under its stripe, which the C side
// does not take: a way the C side took meanwhile stays the C side's
// (run with -race too).
func TestReadLogPutLeavesCTakenWays(t *testing.T) {
	r := newReadLog(0, nil)
	r.snapAt = func(uint16, uint64, *shadow.VC) *shadow.VC { return vcOf(nil) }
	const cm, gm, rounds = 0x7000, 0x8000, 100000
	r.put(readerSeg(2, 1, gm, nil), []uint64{0x1000}, false) // maps the log
	concurrently(1, func(int) {
		for i := uint64(1); i <= rounds; i++ {
			w, ok := cTakeFree(r, cm, 1, i)
			if !ok {
				continue
			}
			for range 20 {
				if r.ways[w].mutex.Load() != cm {
					t.Errorf("round %d: the C side's way went to mutex %#x", i, r.ways[w].mutex.Load())
					return
				}
			}
			r.ways[w].seq.lock()
			r.empty(w)
			r.ways[w].seq.unlock()
		}
	}, func() {
		r.put(readerSeg(2, 5, gm, nil), []uint64{0x2000}, false)
		base := r.slot(gm)
		for i := base; i < base+rlWays; i++ {
			if w := &r.ways[i]; w.mutex.Load() == gm {
				r.mu[0].Lock()
				w.seq.lock()
				if w.mutex.Load() == gm {
					r.empty(i)
				}
				w.seq.unlock()
				r.mu[0].Unlock()
			}
		}
	})
}

// A thread that ended without ThreadExit (cancelled) took its record's
// list with it: when it is forgotten, before its id can go to another
// thread, the ways the C side wrote for it are found and materialized.
func TestForgetMaterializesCMadeWays(t *testing.T) {
	b := newBench(t, "")
	t1, th := cThread(b)
	clock := th.vc.Get(uint16(t1))
	want := th.vc.Copy()
	cPut(b.d.wrSeg.table, wrKey(0x8000), uint16(t1), clock, 0x500)
	b.d.rdSeg.put(readerSeg(0, 1, 0x600, nil), []uint64{0x1000}, false)
	rw, ok := cTakeFree(b.d.rdSeg, 0x600, uint16(t1), clock)
	if !ok {
		t.Fatal("no free reader-log way")
	}
	th.forget()
	b.host.snaps.push(uint16(t1), clock+100, vcOf(map[uint16]uint64{5: 77})) // the id's next thread
	if seg, ok := b.d.wrSeg.get(0x8000); !ok || !seg.vc.LessEq(want) || seg.clock() != clock {
		t.Fatalf("the published write came back as %+v, %v", seg, ok)
	}
	if seg, ok := b.d.rdSeg.seg(rw); !ok || !seg.vc.LessEq(want) || b.d.rdSeg.ways[rw].flags.Load() != 0 {
		t.Fatalf("the published read came back as %+v, %v", seg, ok)
	}
}
