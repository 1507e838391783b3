package detect

import (
	"sync"
	"testing"

	"hgrewrite/shadow"
)

func segAt(tid uint16, clock uint64, mutex uint64) *wrSeg {
	vc := shadow.NewVC(tid)
	vc.Set(tid, clock)
	seg := newSeg(vc, tid, clock)
	seg.addMutex(mutex)
	return &seg
}

// A full slot evicts its least recently written entry into the overflow,
// which keeps the evicted segments' whole past and their mutexes.
func TestSegTableEviction(t *testing.T) {
	st := newSegTable(0, nil)
	st.put(8, segAt(1, 5, 0x100), false)
	st.put(16, segAt(2, 7, 0x200), false)
	for k := uint64(24); k < 8*(segWays+1); k += 8 {
		st.put(k, segAt(3, k, 0x300), false)
	}
	st.put(8, segAt(1, 6, 0x100), false) // replaces; 16 is now the oldest
	st.put(8*(segWays+1), segAt(3, 9, 0x300), false)
	if seg, found := st.find(16); found || st.over.Load() == nil || !st.over.Load().folded() {
		t.Fatalf("16 not evicted into the overflow: %v %v", seg, st.over.Load())
	}
	if seg, found := st.find(8); !found || seg.clock() != 6 || seg.mutex != 0x100 {
		t.Fatalf("8 lost its newest entry: %v", seg)
	}
	for i := uint64(0); i < 20; i++ {
		st.put(32+8*i, segAt(uint16(4+i), 1, 0x400+i), false)
	}
	seg, found, over := st.news(16, 0, shadow.NewVC(0))
	if found {
		t.Errorf("evicted 16 still has an entry: %v", seg)
	}
	if over.vc.Get(2) != 7 || over.vc.Get(1) != 6 || over.vc.Get(3) < 24 {
		t.Errorf("overflow forgot a segment: %v", over.vc)
	}
	if !over.anyMutex() || over.mutexCount() != 0 {
		t.Errorf("overflow of %d+ mutexes keeps %d, anyMutex %v", overflowMutexes, over.mutexCount(), over.anyMutex())
	}
}

// A way keeps its segment's fields in place: a segment of several mutexes
// comes back with all of them, and one that replaces it with one mutex
// does not inherit the others.
func TestSegTableKeepsMutexes(t *testing.T) {
	st := newSegTable(0, nil)
	seg := segAt(1, 5, 0x100)
	seg.addMutex(0x200)
	st.put(8, seg, false)
	got, found := st.find(8)
	if !found || got.mutexCount() != 2 || !got.under(0x100) || !got.under(0x200) || got.clock() != 5 {
		t.Fatalf("a segment of two mutexes came back as %+v", got)
	}
	st.put(8, segAt(2, 7, 0x300), false)
	if got, found = st.find(8); !found || got.mutexCount() != 1 || !got.under(0x300) || got.tid() != 2 {
		t.Fatalf("its replacement came back as %+v", got)
	}
}

// Readers never see a way half rewritten (run with -race too): every
// segment put has its clock's own component equal to its epoch's clock,
// and a reader must find the two equal.
func TestSegTableConcurrentPuts(t *testing.T) {
	st := newSegTable(0, nil)
	const writers, rounds = 4, 3000
	reader := shadow.NewVC(0)
	concurrently(writers, func(w int) {
		for i := range rounds {
			tid, clock := uint16(1+w), uint64(1+i)
			seg := segAt(tid, clock, 0x100*uint64(1+w))
			if i%5 == 0 {
				seg.addMutex(0x7000)
			}
			st.put(8*uint64(1+i%3), seg, false)
		}
	}, func() {
		for k := uint64(8); k <= 24; k += 8 {
			seg, found, _ := st.news(k, 0, reader)
			if !found {
				continue
			}
			if seg.vc.Get(seg.tid()) != seg.clock() || seg.mutex != 0x100*uint64(seg.tid()) ||
				(seg.more != nil) != (seg.clock()%5 == 1) {
				t.Errorf("key %d: a segment mixed from two puts: %+v", k, seg)
			}
		}
	})
}

// concurrently runs write(w) on writers goroutines, and read over and over
// on another until they are all done.
func concurrently(writers int, write func(w int), read func()) {
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			write(w)
		}()
	}
	stop, readerDone := make(chan bool), make(chan bool)
	go func() {
		defer close(readerDone)
		for {
			select {
			case <-stop:
				return
			default:
				read()
			}
		}
	}()
	wg.Wait()
	close(stop)
	<-readerDone
}
