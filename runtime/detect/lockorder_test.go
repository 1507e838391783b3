package detect

import (
	"slices"
	"strings"
	"testing"

	"hgrewrite/abi"
)

const (
	mA = 0x6000
	mB = 0x6040
	mC = 0x6080
)

// froms lists a cycle's mutexes in its order.
func froms(cycle []lockEdge) []uint64 {
	var ms []uint64
	for _, e := range cycle {
		ms = append(ms, e.from)
	}
	return ms
}

// wantCycle checks that cycle goes through the mutexes want in order and
// that each edge leads to the next one's mutex.
func wantCycle(t *testing.T, cycle []lockEdge, want ...uint64) {
	t.Helper()
	got := froms(cycle)
	if len(got) != len(want) {
		t.Fatalf("cycle %#x, want %#x", got, want)
	}
	for i := range want {
		if got[i] != want[i] || cycle[i].to != want[(i+1)%len(want)] {
			t.Fatalf("cycle %#x (edge %d to %#x), want %#x", got, i, cycle[i].to, want)
		}
	}
}

func TestLockGraphTwoLockCycle(t *testing.T) {
	var g lockGraph
	if c := g.add(mA, mB, lockThread{tid: 1}, []uint64{0x100}); c != nil {
		t.Fatalf("first edge closes %#x", froms(c))
	}
	c := g.add(mB, mA, lockThread{tid: 2}, []uint64{0x200})
	wantCycle(t, c, mA, mB)
	if c[0].by.tid != 1 || c[1].by.tid != 2 || c[0].stack[0] != 0x100 || c[1].stack[0] != 0x200 {
		t.Errorf("edges keep the wrong thread or stack: %+v", c)
	}
	if g.add(mB, mA, lockThread{tid: 3}, nil) != nil || g.add(mA, mB, lockThread{tid: 3}, nil) != nil {
		t.Error("an edge seen before reported again")
	}
	if n := g.cyclesFound(); n != 1 {
		t.Errorf("%d cycles counted, want 1", n)
	}
}

func TestLockGraphThreeLockCycle(t *testing.T) {
	var g lockGraph
	if g.add(mA, mB, lockThread{tid: 1}, nil) != nil || g.add(mB, mC, lockThread{tid: 2}, nil) != nil {
		t.Fatal("a chain reported as a cycle")
	}
	wantCycle(t, g.add(mC, mA, lockThread{tid: 3}, nil), mA, mB, mC)
	// the shortest cycle a new edge closes is the one reported: A -> C
	// closes A -> C -> A, not A -> C -> A -> B -> C
	wantCycle(t, g.add(mA, mC, lockThread{tid: 1}, nil), mC, mA)
	if n := g.cyclesFound(); n != 2 {
		t.Errorf("%d cycles counted, want 2", n)
	}
}

func TestLockGraphConsistentOrder(t *testing.T) {
	var g lockGraph
	for i := 0; i < 3; i++ {
		for _, e := range [][2]uint64{{mA, mB}, {mB, mC}, {mA, mC}} {
			if c := g.add(e[0], e[1], lockThread{tid: int32(i)}, nil); c != nil {
				t.Fatalf("consistent order A < B < C reported: %#x", froms(c))
			}
		}
	}
	if g.add(mA, mA, lockThread{tid: 0}, nil) != nil || g.cyclesFound() != 0 {
		t.Error("a lock taken under itself makes a cycle")
	}
}

func TestLockGraphForget(t *testing.T) {
	var g lockGraph
	g.add(mA, mB, lockThread{tid: 1}, nil)
	g.add(mB, mC, lockThread{tid: 1}, nil)
	if !g.forget(mB) || g.forget(mB) {
		t.Fatal("forget did not say B had edges, once")
	}
	if g.add(mB, mA, lockThread{tid: 2}, nil) != nil || g.add(mC, mB, lockThread{tid: 2}, nil) != nil {
		t.Error("edges of a forgotten mutex still close cycles")
	}
	// a released block holding A and B drops both, and C, whose one
	// edge went with B; D and E, above the block, stay
	g.add(mC+0x1000, mC+0x2000, lockThread{tid: 3}, nil)
	if !g.forgetRange(mA, mB-mA+8) {
		t.Fatal("forgetRange found no mutex in [A, B]")
	}
	if want := []uint64{mC + 0x1000, mC + 0x2000}; !slices.Equal(g.mutexes(), want) {
		t.Errorf("nodes after forgetRange: %#x, want %#x", g.mutexes(), want)
	}
	if g.forgetRange(mC+0x1001, 0x1000-1) || !g.holds(mC+0x1000, 1) {
		t.Error("forgetRange dropped a mutex outside its range")
	}
}

// TestLockGraphSearchBound: a path longer than the search visits is not
// followed (no hang on huge graphs); a short one is.
func TestLockGraphSearchBound(t *testing.T) {
	var g lockGraph
	const n = lockCycleVisits + 10
	for i := uint64(0); i < n; i++ {
		g.add(0x10000+i*64, 0x10000+(i+1)*64, lockThread{tid: 1}, nil)
	}
	if g.add(0x10000+n*64, 0x10000, lockThread{tid: 2}, nil) != nil {
		t.Error("a cycle longer than the search bound was found")
	}
	if c := g.add(0x10000+2*64, 0x10000, lockThread{tid: 2}, nil); len(c) != 3 {
		t.Errorf("short cycle: %#x", froms(c))
	}
}

// lockOrderBench: thread a takes m1 then m2, thread b m2 then m1, at
// different times; the second locks carry abi.LockOrder (a new pair, as
// the C side marks it) and each thread's stack follows its flush.
func lockOrderBench(t *testing.T, options string, m1, m2 uint64, firstMode uint64) (int, string) {
	b := newBench(t, options)
	ta, tb := b.create(0, 0x500), b.create(0, 0x510)
	want := 1
	if strings.Contains(options, "detect_deadlocks=0") {
		want = 0
	}
	if n := b.flush(ta, lock(m1, firstMode), lock(m2, abi.LockOrder)); n != want {
		t.Errorf("pending after a new pair: %d, want %d", n, want)
	}
	b.d.Stack(ta, CallStack{RA: []uint64{runtimeCode + 8, 0x1101, 0x1201}})
	b.flush(ta, unlock(m2, 0), unlock(m1, 0))
	b.exitJoin(0, ta)
	b.flush(tb, lock(m2, 0), lock(m1, abi.LockOrder))
	b.d.Stack(tb, CallStack{RA: []uint64{runtimeCode + 8, 0x2101, 0x2201}})
	b.flush(tb, unlock(m1, 0), unlock(m2, 0))
	b.exitJoin(0, tb)
	return b.finish()
}

func TestLockOrderInversion(t *testing.T) {
	n, out := lockOrderBench(t, "", mA, mB, 0)
	if n != 1 || strings.Count(out, "lock-order inversion (potential deadlock)") != 1 {
		t.Fatalf("%d reported, want one inversion:\n%s", n, out)
	}
	for _, want := range []string{
		"Cycle in lock order graph: M1 (0x6000) => M2 (0x6040) => M1",
		"Mutex M2 acquired here while holding mutex M1 in thread T1:\n    #0 0x1100",
		"Mutex M1 acquired here while holding mutex M2 in thread T2:\n    #0 0x2100",
		"Mutex M1 at 0x6000 is not a global",
		"Mutex M2 at 0x6040 is not a global",
		"Thread T1 created by T0 at:\n    #0 0x4ff", // the call (ra-1)
		"Thread T2 created by T0 at:\n    #0 0x50f",
		"SUMMARY: hgrewrite: 1 lock-order inversion(s)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "data race") {
		t.Errorf("a race reported:\n%s", out)
	}
}

func TestLockOrderOff(t *testing.T) {
	if n, out := lockOrderBench(t, "detect_deadlocks=0", mA, mB, 0); n != 0 || out != "" {
		t.Errorf("detect_deadlocks=0 reported %d:\n%s", n, out)
	}
}

// A trylock's mutex still orders what is taken under it: T1 try-locks A
// then locks B (edge A -> B), T2 locks B then A (B -> A): a cycle.
func TestLockOrderTrylockHeld(t *testing.T) {
	if n, out := lockOrderBench(t, "", mA, mB, abi.LockTry); n != 1 {
		t.Errorf("trylock as the held end: %d reported, want 1:\n%s", n, out)
	}
}

// A successful trylock makes no edge into its mutex: T1 locks A, then
// try-locks B; T2 locks B then A. No cycle.
func TestLockOrderTrylockAcquired(t *testing.T) {
	b := newBench(t, "")
	ta, tb := b.create(0, 0x500), b.create(0, 0x510)
	if n := b.flush(ta, lock(mA, 0), lock(mB, abi.LockOrder|abi.LockTry)); n != 0 {
		t.Errorf("a trylock waits for a stack (%d)", n)
	}
	b.flush(ta, unlock(mB, 0), unlock(mA, 0))
	b.flush(tb, lock(mB, 0), lock(mA, abi.LockOrder))
	b.d.Stack(tb, CallStack{RA: []uint64{0x2101}})
	b.flush(tb, unlock(mA, 0), unlock(mB, 0))
	if n, out := b.finish(); n != 0 {
		t.Errorf("%d reported:\n%s", n, out)
	}
}

// A recursive lock of a held mutex adds nothing; neither does the same
// order taken again.
func TestLockOrderNestedSame(t *testing.T) {
	b := newBench(t, "")
	if n := b.flush(0, lock(mA, 0), lock(mA, abi.LockOrder)); n != 0 {
		t.Errorf("a recursive lock waits for a stack (%d)", n)
	}
	b.flush(0, lock(mB, abi.LockOrder))
	b.d.Stack(0, CallStack{RA: []uint64{0x1101}})
	b.flush(0, lock(mA, abi.LockOrder)) // A held: recursive again
	b.flush(0, unlock(mA, 0), unlock(mB, 0), unlock(mA, 0), unlock(mA, 0))
	if n, out := b.finish(); n != 0 || out != "" {
		t.Errorf("%d reported:\n%s", n, out)
	}
	if b.d.order.add(mA, mB, lockThread{}, nil) != nil || b.d.order.add(mB, mA, lockThread{}, nil) == nil {
		t.Error("the graph does not hold exactly the edge A -> B")
	}
}

// A destroyed mutex loses its edges, and the C side's filter is told.
func TestLockOrderDestroy(t *testing.T) {
	b := newBench(t, "")
	b.flush(0, lock(mA, 0), lock(mB, abi.LockOrder))
	b.d.Stack(0, CallStack{RA: []uint64{0x1101}})
	b.flush(0, unlock(mB, 0), unlock(mA, 0), unlock(mB, abi.LockDestroy))
	if b.host.forgets != 1 {
		t.Errorf("ForgetLockPairs called %d times, want 1", b.host.forgets)
	}
	b.flush(0, lock(mB, 0), lock(mA, abi.LockOrder))
	b.d.Stack(0, CallStack{RA: []uint64{0x1201}})
	if n, out := b.finish(); n != 0 {
		t.Errorf("a new mutex at a destroyed one's address closed a cycle:\n%s", out)
	}
}

// A released heap block drops the edges of the mutexes in it.
func TestLockOrderFreedBlock(t *testing.T) {
	b := newBench(t, "")
	b.flush(0, alloc(0x9000, 64, 0x100), lock(mA, 0), lock(0x9008, abi.LockOrder))
	b.d.Stack(0, CallStack{RA: []uint64{0x1101}})
	b.flush(0, unlock(0x9008, 0), unlock(mA, 0))
	b.d.Free(0, 0x9000, 64, 0x200)
	b.flush(0, lock(0x9008, 0), lock(mA, abi.LockOrder))
	b.d.Stack(0, CallStack{RA: []uint64{0x1201}})
	if n, out := b.finish(); n != 0 || b.host.forgets != 1 {
		t.Errorf("freed mutex: %d reported, %d forgets:\n%s", n, b.host.forgets, out)
	}
}
