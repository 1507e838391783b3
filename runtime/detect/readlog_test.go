package detect

import (
	"testing"

	"hgrewrite/shadow"
)

// readerSeg is a reader segment of thread tid at clock, whose clock knows
// the threads in after up to the given clocks, published under m.
func readerSeg(tid uint16, clock uint64, m uint64, after map[uint16]uint64) *wrSeg {
	vc := shadow.NewVC(tid)
	vc.Set(tid, clock)
	for u, c := range after {
		vc.Set(u, c)
	}
	seg := newSeg(vc, tid, clock)
	seg.addMutex(m)
	return &seg
}

// found lists the segments a writer t under m finds news in for [lo, hi).
func found(r *readLog, t *thread, m, lo, hi uint64) []wrSeg {
	var segs [rlWays]wrSeg
	n, _ := r.news(t, m, lo, hi, &segs)
	return segs[:n]
}

// is reports whether got is the segment want was published as (the log
// keeps its fields, not the segment).
func is(got wrSeg, want *wrSeg) bool {
	return got.vc == want.vc && got.epoch == want.epoch && got.mutex == want.mutex && got.more == want.more
}

func writerOf(tid uint16) *thread {
	return &thread{tid: int32(tid), vc: shadow.NewVC(tid)}
}

func TestReadLogMergesAThreadsRegions(t *testing.T) {
	r := newReadLog(0, nil)
	const m = 0x7000
	first, second := readerSeg(1, 5, m, nil), readerSeg(1, 9, m, nil)
	r.put(first, []uint64{0x1000, 0x1008}, false)
	r.put(second, []uint64{0x2000}, false)
	w := writerOf(2)
	// the first region's read is still there, under the later segment
	if got := found(r, w, m, 0x1008, 0x100c); len(got) != 1 || !is(got[0], second) {
		t.Fatalf("write of the first region's read found %v, want the second segment", got)
	}
	if got := found(r, w, m, 0x2000, 0x2004); len(got) != 1 || !is(got[0], second) {
		t.Fatalf("write of the second region's read found %v", got)
	}
	if got := found(r, w, m, 0x3000, 0x3004); len(got) != 0 {
		t.Fatalf("write of nothing read found %v", got)
	}
	if got := found(r, w, m+0x40, 0x1000, 0x1004); len(got) != 0 {
		t.Fatalf("a writer under another mutex found %v", got)
	}
	// a writer that knows the segment has no news
	w.vc.Set(1, 9)
	if got := found(r, w, m, 0x1000, 0x1004); len(got) != 0 {
		t.Fatalf("a writer ordered after the reader found %v", got)
	}
}

func TestReadLogKeepsUnorderedReaders(t *testing.T) {
	r := newReadLog(0, nil)
	const m = 0x7000
	a, b := readerSeg(1, 5, m, nil), readerSeg(2, 3, m, nil)
	r.put(a, []uint64{0x1000}, false)
	r.put(b, []uint64{0x1000}, false)
	if got := found(r, writerOf(3), m, 0x1000, 0x1004); len(got) != 2 {
		t.Fatalf("two unordered readers: found %d segments, want both", len(got))
	}
	// a third reader ordered after both takes their ways over
	c := readerSeg(4, 2, m, map[uint16]uint64{1: 5, 2: 3})
	r.put(c, []uint64{0x5000}, false)
	got := found(r, writerOf(3), m, 0x1000, 0x1004)
	if len(got) != 1 || !is(got[0], c) {
		t.Fatalf("after a reader ordered after both: found %v, want only its segment", got)
	}
}

func TestReadLogSaturates(t *testing.T) {
	r := newReadLog(0, nil)
	const m = 0x7000
	var seg *wrSeg
	for i := uint64(0); i < 3; i++ {
		addrs := make([]uint64, ReadLogKeys)
		for j := range addrs {
			addrs[j] = 0x10000 + (i*ReadLogKeys+uint64(j))*8
		}
		seg = readerSeg(1, 5+i, m, nil)
		r.put(seg, addrs, false)
	}
	// more granules than a way keeps: it stands for every variable
	if got := found(r, writerOf(2), m, 0x900000, 0x900004); len(got) != 1 || !is(got[0], seg) {
		t.Fatalf("a saturated way found %v for an address never read, want the latest segment", got)
	}
}

func TestReadLogEvictsIntoOverflow(t *testing.T) {
	r := newReadLog(0, nil)
	first := readerSeg(1, 5, 0x7000, nil)
	r.put(first, []uint64{0x1000}, false)
	for i := uint64(0); i < 2*ReadLogWays; i++ {
		r.put(readerSeg(uint16(2+i), 1, 0x8000+0x40*i, nil), []uint64{0x2000}, false)
	}
	if got := found(r, writerOf(99), 0x7000, 0x1000, 0x1004); len(got) != 0 {
		t.Fatalf("the evicted way is still found: %v", got)
	}
	over := r.over.Load()
	if over == nil || !over.covers(first) {
		t.Fatalf("the overflow %v does not stand for the evicted reader", over)
	}
	if r.over.head.id.Load() != over.more.id {
		t.Fatalf("the overflow's id for the C side is %d, want %d", r.over.head.id.Load(), over.more.id)
	}
}

// Publications under many mutexes that share the log's one slot, from
// several goroutines at once, while others look up: a look-up never sees
// a half-written way as a region of its mutex (run with -race too), and
// what a mutex's last region published stays found, in a way or in the
// overflow.
func TestReadLogConcurrent(t *testing.T) {
	r := newReadLog(0, nil)
	const workers, rounds = 12, 1000 // more mutexes than ways: evictions too
	reader := writerOf(99)
	concurrently(workers, func(w int) {
		m := uint64(0x9000 + 0x40*w) // one mutex per worker, all in the one slot
		for i := range rounds {
			seg := readerSeg(uint16(1+w), uint64(1+i), m, nil)
			r.put(seg, []uint64{0x10000 * uint64(1+w)}, false)
		}
	}, func() {
		for w := range workers {
			m := uint64(0x9000 + 0x40*w)
			for _, s := range found(r, reader, m, 0, 1<<40) {
				if s.mutex != m || s.tid() != uint16(1+w) {
					t.Errorf("a look-up under %#x found a segment of T%d under %#x", m, s.tid(), s.mutex)
				}
			}
		}
	})
	for w := range workers {
		workerKept(t, r, w)
	}
}

// workerKept checks that what worker w of the concurrent tests read last
// (under mutex 0x9000+0x40*w, at 0x10000*(1+w)) is in a way or in the
// overflow, and returns what a writer finds in the ways.
func workerKept(t *testing.T, r *readLog, w int) []wrSeg {
	t.Helper()
	m, a := uint64(0x9000+0x40*w), 0x10000*uint64(1+w)
	last := found(r, writerOf(99), m, a, a+4)
	over := r.over.Load()
	if len(last) == 0 && (over == nil || !over.under(m) && !over.anyMutex()) {
		t.Errorf("worker %d's reads are neither in a way nor in the overflow", w)
	}
	return last
}

// moveOn does what runtime/regionpub.c does at the end of a region of
// thread tid that read only what its way under m holds: it takes the
// way, moves its epoch to the thread's clock, and gives it back. It
// reports whether it found the way free to take.
func moveOn(r *readLog, m uint64, tid uint16, clock uint64) bool {
	base := r.slot(m)
	for i := base; i < base+rlWays; i++ {
		w := &r.ways[i]
		s := w.seq.Load()
		if s&1 != 0 || w.mutex.Load() != m || shadow.Epoch(w.epoch.Load()).TID() != tid {
			continue
		}
		if !w.seq.CompareAndSwap(s, s+1) {
			return false
		}
		w.epoch.Store(uint64(shadow.MakeEpoch(tid, clock)))
		w.seq.Store(s + 2)
		return true
	}
	return false
}

// A way whose epoch the C side moved on stands for the later segment:
// the same past, the thread's own clock from the epoch.
func TestReadLogEpochMovedOn(t *testing.T) {
	r := newReadLog(0, nil)
	const m = 0x7000
	seg := readerSeg(1, 5, m, map[uint16]uint64{3: 7})
	r.put(seg, []uint64{0x1000}, false)
	if !moveOn(r, m, 1, 9) {
		t.Fatal("the way was not found to move on")
	}
	w := writerOf(2)
	w.vc.Set(1, 5) // knows the published segment, not the later one
	got := found(r, w, m, 0x1000, 0x1004)
	if len(got) != 1 || got[0].clock() != 9 || got[0].tid() != 1 || got[0].vc.Get(3) != 7 {
		t.Fatalf("a writer after the published segment found %v, want T1's segment at clock 9 knowing T3@7", got)
	}
	// a reader ordered after the published segment but not the moved one
	// does not take the way over; one ordered after the moved one does
	r.put(readerSeg(4, 2, m, map[uint16]uint64{1: 5}), []uint64{0x2000}, false)
	if got := found(r, writerOf(2), m, 0x1000, 0x1004); len(got) != 1 || got[0].tid() != 1 {
		t.Fatalf("after a reader that knows only T1@5: found %v, want T1's way still", got)
	}
	later := readerSeg(5, 2, m, map[uint16]uint64{1: 9, 4: 2})
	r.put(later, []uint64{0x3000}, false)
	if got := found(r, writerOf(2), m, 0x1000, 0x1004); len(got) != 1 || !is(got[0], later) {
		t.Fatalf("after a reader that knows T1@9 and T4: found %v, want only its segment", got)
	}
}

// The C side moves its ways on while the Go side publishes into the same
// slot and evicts: each keeps the way whole (run with -race too), and no
// region's reads are lost.
func TestReadLogMovedOnConcurrently(t *testing.T) {
	r := newReadLog(0, nil)
	const workers, rounds = 4, 2000
	done := make(chan bool)
	for w := range workers {
		go func() {
			m, tid := uint64(0x9000+0x40*w), uint16(1+w)
			for i := range rounds {
				clock := uint64(1 + 2*i)
				if i%3 != 0 && moveOn(r, m, tid, clock) {
					continue
				}
				r.put(readerSeg(tid, clock, m, nil), []uint64{0x10000 * uint64(1+w)}, false)
			}
			done <- true
		}()
	}
	go func() { // others publishing into the slot: evictions
		for i := range rounds {
			m := uint64(0xa000 + 0x40*(i%(2*ReadLogWays)))
			r.put(readerSeg(uint16(50+i%(2*ReadLogWays)), uint64(1+i), m, nil), []uint64{0x5000}, false)
		}
		done <- true
	}()
	for range workers + 1 {
		<-done
	}
	for w := range workers {
		last := workerKept(t, r, w)
		if len(last) == 1 && last[0].clock() != uint64(2*rounds-1) && last[0].tid() == uint16(1+w) {
			t.Errorf("worker %d's way holds clock %d, want its last region's %d", w, last[0].clock(), 2*rounds-1)
		}
	}
}

// A region that read more than its record keeps stands for every
// variable: a writer of an address it did not record finds it.
func TestReadLogRegionReadMoreThanRecorded(t *testing.T) {
	r := newReadLog(0, nil)
	const m = 0x7000
	seg := readerSeg(1, 5, m, nil)
	r.put(seg, []uint64{0x1000, 0x1008}, true)
	if got := found(r, writerOf(2), m, 0x9000, 0x9008); len(got) != 1 || !is(got[0], seg) {
		t.Fatalf("a write of an address the region read past its record found %v, want its segment", got)
	}
	exact := newReadLog(0, nil)
	exact.put(seg, []uint64{0x1000, 0x1008}, false)
	if got := found(exact, writerOf(2), m, 0x9000, 0x9008); len(got) != 0 {
		t.Fatalf("a region that recorded all its reads stood for %v at an address it never read", got)
	}
}
