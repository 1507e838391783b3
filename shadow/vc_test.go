package shadow

import "testing"

func TestEpoch(t *testing.T) {
	for _, c := range []struct {
		tid   uint16
		clock uint64
	}{{0, 0}, {1, 1}, {65535, MaxClock}, {7, 123456789}, {0xffff, 0}} {
		e := MakeEpoch(c.tid, c.clock)
		if e.TID() != c.tid || e.Clock() != c.clock {
			t.Errorf("MakeEpoch(%d,%d) = %v: TID %d Clock %d", c.tid, c.clock, e, e.TID(), e.Clock())
		}
	}
	if MakeEpoch(3, MaxClock+5).TID() != 3 {
		t.Error("clock overflowed into the tid")
	}
	if uint64(MakeEpoch(1, 2)) != 1<<48|2 {
		t.Error("layout")
	}
}

func TestVCOps(t *testing.T) {
	v := NewVC(3)
	if v.Get(3) != 1 || v.Get(0) != 0 || v.Get(1000) != 0 {
		t.Fatalf("newVC: %v", v)
	}
	if v.Tick(3) != 2 || v.Get(3) != 2 {
		t.Fatal("tick")
	}
	w := &VC{}
	w.Set(1, 5)
	w.Set(3, 1)
	w.Set(10, 2)
	v.Join(w)
	for tid, want := range map[uint16]uint64{1: 5, 3: 2, 10: 2, 4: 0} {
		if v.Get(tid) != want {
			t.Errorf("join: V(%d) = %d, want %d (%v)", tid, v.Get(tid), want, v)
		}
	}
	c := v.Copy()
	c.Tick(1)
	if v.Get(1) != 5 || c.Get(1) != 6 {
		t.Error("Copy shares storage")
	}
	if !v.LessEq(c) || c.LessEq(v) || !v.LessEq(v) {
		t.Error("LessEq")
	}
	var z VC
	z.CopyFrom(c)
	if !z.LessEq(c) || !c.LessEq(&z) {
		t.Error("CopyFrom")
	}
	z.Reset()
	if z.Get(1) != 0 || !z.LessEq(v) {
		t.Error("Reset")
	}
	z.Set(20, 0) // no growth for zero
	if z.Len() != 0 {
		t.Error("Set 0 grew")
	}
	var e VC
	if !e.HappensBefore(0) || e.HappensBefore(MakeEpoch(2, 1)) {
		t.Error("HappensBefore on empty VC")
	}
	s := &VC{}
	s.Set(5, MaxClock)
	if s.Tick(5) != MaxClock {
		t.Error("Tick must saturate")
	}
	if v.String() != "[1:5 3:2 10:2]" {
		t.Errorf("String = %s", v.String())
	}
}

// fork/join as in ch. 3.4.2.2 and 5.1.
func TestHBForkJoin(t *testing.T) {
	const T, U = 1, 2
	vt := NewVC(T)
	before := vt.Epoch(T) // parent's access before fork
	// fork(u)
	vu := NewVC(U)
	vu.Join(vt)
	vt.Tick(T)
	after := vt.Epoch(T) // parent's access after fork
	child := vu.Epoch(U)

	if !vu.HappensBefore(before) {
		t.Error("parent's access before fork must happen before the child")
	}
	if vu.HappensBefore(after) {
		t.Error("parent's access after fork is parallel to the child")
	}
	if vt.HappensBefore(child) {
		t.Error("child's access is parallel to the parent before join")
	}
	// join(u)
	vt.Join(vu)
	vt.Tick(T)
	if !vt.HappensBefore(child) || !vt.HappensBefore(after) {
		t.Error("after join everything of the child happens before the parent")
	}
}

// The example of dissertation table 3.2 / fig. 3.11: signal/wait.
func TestHBSignalWait(t *testing.T) {
	const T1, T2 = 0, 1
	v1, v2 := NewVC(T1), NewVC(T2) // (1,0) (0,1)
	cv := &VC{}
	// main: write GLOB, then signal
	v1.Tick(T1) // (2,0): some earlier synchronisation
	w1 := v1.Epoch(T1)
	cv.CopyFrom(v1) // TS_cv <- TS_t
	v1.Tick(T1)     // TS_t <- NewSegment(TS_t)
	w1after := v1.Epoch(T1)
	// worker: wait, then write
	v2.Join(cv) // TS_u <- NewSegment(TS_u, TS_cv)
	v2.Tick(T2)
	if v2.Get(T1) != 2 || v2.Get(T2) != 2 {
		t.Errorf("worker VC = %v, want [0:2 1:2]", v2)
	}
	if !v2.HappensBefore(w1) {
		t.Error("write before signal must happen before the access after wait")
	}
	if v2.HappensBefore(w1after) {
		t.Error("write after signal is parallel to the waiter")
	}
	if v1.HappensBefore(v2.Epoch(T2)) {
		t.Error("waiter's access is parallel to the signaller")
	}
}

func TestHBBarrier(t *testing.T) {
	const n = 4
	v := make([]*VC, n)
	pre := make([]Epoch, n)
	for i := range v {
		v[i] = NewVC(uint16(i))
		v[i].Tick(uint16(i))
		pre[i] = v[i].Epoch(uint16(i))
	}
	b := &VC{}
	for i := range v { // before barrier: TS_b <- NewSegment(TS_b, TS_t)
		b.Join(v[i])
	}
	for i := range v { // after barrier: TS_t <- NewSegment(TS_t, TS_b)
		v[i].Join(b)
		v[i].Tick(uint16(i))
	}
	for i := range v {
		for j := range pre {
			if !v[i].HappensBefore(pre[j]) {
				t.Errorf("thread %d: pre-barrier access of %d must happen before", i, j)
			}
			if i != j && v[i].HappensBefore(v[j].Epoch(uint16(j))) {
				t.Errorf("thread %d: post-barrier access of %d must be parallel", i, j)
			}
		}
	}
}

// A copy is independent of its original at every size (a few threads'
// clocks share one allocation with their header), and grows past its
// first size with zeros.
func TestVCCopySizes(t *testing.T) {
	for _, n := range []int{1, 3, 4, 7, 8, 20} {
		v := &VC{}
		for i := range n {
			v.Set(uint16(i), uint64(10+i))
		}
		c := v.Copy()
		c.Set(0, 99)
		if v.Get(0) != 10 {
			t.Errorf("n=%d: the original took its copy's change: %v", n, v)
		}
		v.Set(uint16(n-1), 77)
		want := uint64(10 + n - 1)
		if n == 1 {
			want = 99 // the component the copy set
		}
		if c.Get(uint16(n-1)) != want {
			t.Errorf("n=%d: the copy took its original's change: %v", n, c)
		}
		c.Set(uint16(n+1), 5)
		if c.Get(uint16(n)) != 0 || c.Get(uint16(n+1)) != 5 || c.Len() != n+2 {
			t.Errorf("n=%d: the copy grew to %v", n, c)
		}
		if v.Len() != n || v.Get(uint16(n+1)) != 0 {
			t.Errorf("n=%d: the original changed with its copy: %v", n, v)
		}
	}
}
