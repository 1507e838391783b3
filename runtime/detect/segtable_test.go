package detect

import (
	"testing"

	"hgrewrite/shadow"
)

func segAt(tid uint16, clock uint64, mutex uint64) *wrSeg {
	vc := shadow.NewVC(tid)
	vc.Set(tid, clock)
	seg := newSeg(vc, tid, clock)
	seg.addMutex(mutex)
	return seg
}

// A full slot evicts its least recently written entry into the overflow,
// which keeps the evicted segments' whole past and their mutexes.
func TestSegTableEviction(t *testing.T) {
	st := newSegTable(0, nil)
	any := func(shadow.Epoch, *wrSeg) bool { return true }
	st.put(8, segAt(1, 5, 0x100), any, nil)
	st.put(16, segAt(2, 7, 0x200), any, nil)
	for k := uint64(24); k < 8*(segWays+1); k += 8 {
		st.put(k, segAt(3, k, 0x300), any, nil)
	}
	st.put(8, segAt(1, 6, 0x100), any, nil) // replaces; 16 is now the oldest
	st.put(8*(segWays+1), segAt(3, 9, 0x300), any, nil)
	if seg, over := st.find(16), st.over.Load(); seg != nil || over == nil || !over.folded() {
		t.Fatalf("16 not evicted into the overflow: %v %v", seg, over)
	}
	if seg := st.find(8); seg == nil || seg.clock() != 6 {
		t.Fatalf("8 lost its newest entry: %v", seg)
	}
	for i := uint64(0); i < 20; i++ {
		st.put(32+8*i, segAt(uint16(4+i), 1, 0x400+i), any, nil)
	}
	segs, over := st.news(16, 0, shadow.NewVC(0))
	if segs != [segWays]*wrSeg{} {
		t.Errorf("evicted 16 still has entries: %v", segs)
	}
	if over.vc.Get(2) != 7 || over.vc.Get(1) != 6 || over.vc.Get(3) < 24 {
		t.Errorf("overflow forgot a segment: %v", over.vc)
	}
	if !over.anyMutex() || over.mutexCount() != 0 {
		t.Errorf("overflow of %d+ mutexes keeps %d, anyMutex %v", overflowMutexes, over.mutexCount(), over.anyMutex())
	}
}
