package detect

import (
	"sync/atomic"
	"testing"

	"hgrewrite/shadow"
)

// The C side publishes a region of a thread that joined nothing since its
// current clock snapshot (runtime/regionpub.c): its ways name the
// snapshot by their epoch's thread (snapOf) until the thread's next join,
// before which the Go side writes the snapshot itself into each of them
// (thread.dropSnapshot). These tests write the ways as the C side does.

// cPut is runtime/regionpub.c's hg_write_publish: key's way, or a free
// one, takes the epoch (tid, clock) and mutex m, its snapshot by
// reference. It returns the way's index in the table.
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

// A way written in C stands for its thread's current snapshot until it is
// materialized, and for the snapshot it was given after that.
func TestSegTableCMadeWay(t *testing.T) {
	st := newSegTable(0, nil)
	snaps := map[uint16]*shadow.VC{}
	st.snapOf = func(tid uint16) *shadow.VC { return snaps[tid] }
	st.put(8, segAt(1, 1, 0x100), false) // the Go side makes the table
	before := vcOf(map[uint16]uint64{2: 4, 3: 9})
	snaps[2] = before
	w := cPut(st, 16, 2, 5, 0x200)
	seg, ok := st.find(16)
	if !ok || seg.vc != before || seg.clock() != 5 || seg.tid() != 2 || seg.mutex != 0x200 || seg.more != nil {
		t.Fatalf("the C side's way came back as %+v, %v", seg, ok)
	}
	st.materialize(w, 3, vcOf(nil)) // another thread's materialization leaves it
	st.materialize(w, 2, before)
	snaps[2] = vcOf(map[uint16]uint64{2: 6, 3: 20}) // thread 2 joined later
	if seg, ok = st.find(16); !ok || seg.vc != before || seg.clock() != 5 {
		t.Fatalf("materialized, the way came back as %+v, %v", seg, ok)
	}
	if st.slot(16).meta.cmade.Load() != 0 {
		t.Fatal("the way still names its thread's snapshot")
	}
	// a way the Go side rewrites is its own again
	w = cPut(st, 24, 2, 7, 0x200)
	st.put(24, segAt(4, 1, 0x400), false)
	st.materialize(w, 2, before)
	if seg, ok = st.find(24); !ok || seg.tid() != 4 || seg.vc == before || seg.mutex != 0x400 {
		t.Fatalf("the Go side's put came back as %+v, %v", seg, ok)
	}
}

// A reader-log way the C side moved on past its thread's join names the
// thread's current snapshot, until materialized.
func TestReadLogCMadeWay(t *testing.T) {
	r := newReadLog(0, nil)
	snaps := map[uint16]*shadow.VC{}
	r.snapOf = func(tid uint16) *shadow.VC { return snaps[tid] }
	const m = 0x7000
	r.put(readerSeg(1, 5, m, nil), []uint64{0x1000}, false)
	now := vcOf(map[uint16]uint64{1: 8, 3: 7}) // thread 1 joined thread 3 since
	snaps[1] = now
	i := r.slot(m)
	w := &r.ways[i]
	w.seq.lock()
	w.flags.Store(rlCMade)
	w.epoch.Store(uint64(shadow.MakeEpoch(1, 9)))
	w.seq.unlock()
	got := found(r, writerOf(2), m, 0x1000, 0x1004)
	if len(got) != 1 || got[0].vc != now || got[0].clock() != 9 || got[0].mutex != m {
		t.Fatalf("a writer found %+v", got)
	}
	r.materialize(i, 1, now)
	snaps[1] = vcOf(map[uint16]uint64{1: 12, 3: 30})
	got = found(r, writerOf(2), m, 0x1000, 0x1004)
	if len(got) != 1 || got[0].vc != now || got[0].clock() != 9 || w.flags.Load() != 0 {
		t.Fatalf("materialized, a writer found %+v", got)
	}
}

// snapshotThread makes a thread whose fast path asked for a snapshot, and
// gives it one (thread.snapshot), after the Go side made the published
// writes' table: the C side may publish for it now.
func snapshotThread(b *bench) (int32, *thread, *shadow.VC) {
	tid := b.create(0, 0x100)
	b.flush(tid)
	th := b.d.thread(tid)
	b.region(tid).wantSnap = true
	snap := th.snapshot()
	b.d.wrSeg.table.put(wrKey(0x9000), segAt(0, 1, 0x500), false)
	return tid, th, snap
}

// A thread's join materializes the ways the C side published under its
// snapshot before the snapshot goes: a reader of such a way is ordered
// after what the thread knew at its region, not after what it joined
// later.
func TestJoinMaterializesCMadeWays(t *testing.T) {
	b := newBench(t, "")
	t1, th, snap := snapshotThread(b)
	t2 := b.create(0, 0x200)
	if !b.region(t1).snapOK {
		t.Fatal("the fast path was not told of the snapshot")
	}
	clock := th.vc.Get(uint16(t1))
	w := cPut(b.d.wrSeg.table, wrKey(0x8000), uint16(t1), clock, 0x500)
	b.region(t1).cmade = append(b.region(t1).cmade, fakeWay{HandoffWrites, w})
	if seg, ok := b.d.wrSeg.get(0x8000); !ok || seg.vc != snap {
		t.Fatalf("before the join the way came back as %+v, %v", seg, ok)
	}
	later := vcOf(map[uint16]uint64{uint16(t2): 50})
	th.join(later)
	if b.region(t1).snapOK || len(b.region(t1).cmade) != 0 || th.snap != nil {
		t.Fatal("the join left the snapshot in place")
	}
	seg, ok := b.d.wrSeg.get(0x8000)
	if !ok || seg.vc != snap || seg.vc.Get(uint16(t2)) == 50 || seg.clock() != clock {
		t.Fatalf("after the join the way came back as %+v, %v", seg, ok)
	}
}

// Readers never resolve a way to a snapshot other than the one it was
// written under (run with -race too): a thread publishes in C under
// snapshot after snapshot, materializing before each next one, and every
// segment a reader finds has its clock snapshot's own component equal to
// its epoch's clock, as each snapshot here has.
func TestSegTableCMadeConcurrentReaders(t *testing.T) {
	st := newSegTable(0, nil)
	var cur atomic.Pointer[shadow.VC]
	st.snapOf = func(uint16) *shadow.VC { return cur.Load() }
	st.put(8, segAt(2, 1, 0x100), false)
	const key, rounds = 16, 20000
	reader := shadow.NewVC(3)
	concurrently(1, func(int) {
		for i := uint64(1); i <= rounds; i++ {
			vc := vcOf(map[uint16]uint64{1: i})
			cur.Store(vc)
			w := cPut(st, key, 1, i, 0x100)
			st.materialize(w, 1, vc)
		}
	}, func() {
		if seg, ok, _ := st.news(key, 3, reader); ok && seg.vc.Get(1) != seg.clock() {
			t.Errorf("epoch clock %d resolved to a snapshot of clock %d", seg.clock(), seg.vc.Get(1))
		}
	})
}

// A thread that never joins has its ways materialized when a region of
// its goes to the Go side (the C side's list is full then): its snapshot
// stays known, and the list empties.
func TestRegionEndMaterializesCMadeWays(t *testing.T) {
	b := newBench(t, "")
	t1, th, snap := snapshotThread(b)
	w := cPut(b.d.wrSeg.table, wrKey(0x8000), uint16(t1), th.vc.Get(uint16(t1)), 0x500)
	b.region(t1).cmade = append(b.region(t1).cmade, fakeWay{HandoffWrites, w})
	b.d.regionEnd(th, 0x500, true, false, true)
	if len(b.region(t1).cmade) != 0 || !b.region(t1).snapOK || th.snap != snap {
		t.Fatal("the region's end did not empty the list, or dropped the snapshot")
	}
	if b.d.wrSeg.table.slot(wrKey(0x8000)).meta.cmade.Load() != 0 {
		t.Fatal("the way still names its thread's snapshot")
	}
	if seg, ok := b.d.wrSeg.get(0x8000); !ok || seg.vc != snap {
		t.Fatalf("the way came back as %+v, %v", seg, ok)
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
	r.snapOf = func(uint16) *shadow.VC { return vcOf(nil) }
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
	t1, th, snap := snapshotThread(b)
	cPut(b.d.wrSeg.table, wrKey(0x8000), uint16(t1), th.vc.Get(uint16(t1)), 0x500)
	b.d.rdSeg.put(readerSeg(0, 1, 0x600, nil), []uint64{0x1000}, false)
	rw, ok := cTakeFree(b.d.rdSeg, 0x600, uint16(t1), th.vc.Get(uint16(t1)))
	if !ok {
		t.Fatal("no free reader-log way")
	}
	th.forget()
	if seg, ok := b.d.wrSeg.get(0x8000); !ok || seg.vc != snap {
		t.Fatalf("the published write came back as %+v, %v", seg, ok)
	}
	if seg, ok := b.d.rdSeg.seg(rw); !ok || seg.vc != snap || b.d.rdSeg.ways[rw].flags.Load() != 0 {
		t.Fatalf("the published read came back as %+v, %v", seg, ok)
	}
}
