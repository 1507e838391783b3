package detect

import (
	"strings"
	"testing"
)

// TestThreadIDReuse: a thread created after its creator joined another
// takes the joined thread's id, starts its clock above the joined
// thread's, and is ordered after it: their accesses to the same variable
// do not race. Vector clocks stay as long as the threads alive at once.
func TestThreadIDReuse(t *testing.T) {
	b := newBench(t, "")
	const x = 0x5000
	for i := 0; i < 100; i++ {
		c := b.create(0, 0x400100)
		if c != 1 {
			t.Fatalf("round %d: new thread is T%d, want T1 again", i, c)
		}
		b.flush(c, wr(x, 8, 0x400200), rd(x+8, 8, 0x400210))
		b.exitJoin(0, c)
	}
	b.flush(0, wr(x, 8, 0x400300))
	if n, out := b.finish(); n != 0 {
		t.Fatalf("%d races:\n%s", n, out)
	}
	if l := b.d.thread(0).vc.Len(); l > 2 {
		t.Errorf("main's clock has %d entries after 100 threads, one alive at a time", l)
	}
}

// TestThreadIDNotReusedUnordered: an id is not reused by a creator that
// has not synchronised with the joined thread's end (here T2 joined T1,
// and main knows nothing of it), and a thread that was never ordered with
// the first one still races with it; the report says the id was reused
// when it was.
func TestThreadIDNotReusedUnordered(t *testing.T) {
	b := newBench(t, "")
	const x = 0x6000
	t1 := b.create(0, 0x400100)
	t2 := b.create(0, 0x400110)
	b.flush(t1, wr(x, 8, 0x400200))
	b.exitJoin(t2, t1) // T2 joins T1: main is not ordered after T1
	if t3 := b.create(0, 0x400120); t3 == t1 {
		t.Fatalf("main reused T%d without being ordered after it", t1)
	}
	t4 := b.create(t2, 0x400130) // T2 joined T1: T4 may take its id
	if t4 != t1 {
		t.Fatalf("T2's new thread is T%d, want T%d (reused)", t4, t1)
	}
	b.flush(0, wr(x, 8, 0x400300)) // main vs the first T1: a race
	n, out := b.finish()
	if n != 1 {
		t.Fatalf("%d races, want 1:\n%s", n, out)
	}
	for _, want := range []string{"The id T1 is reused: 1 earlier thread(s)",
		"Earlier T1 (1 back) created by T0 at:\n    #0 0x4000ff"} { // the call at 0x400100 (ra-1)
		if !strings.Contains(out, want) {
			t.Errorf("the report does not say %q:\n%s", want, out)
		}
	}
}

// TestDetachedIDReuse: ids of detached threads that exited are reused
// after a quarantine, so a thread-per-request program keeps ids (and
// clocks) bounded; two detached threads alive at once still race.
func TestDetachedIDReuse(t *testing.T) {
	b := newBench(t, "")
	ids := map[int32]bool{}
	for i := 0; i < 500; i++ {
		c := b.create(0, 0x400100)
		ids[c] = true
		b.flush(c, wr(0x10000+uint64(i)*64, 8, 0x400200)) // its own variable
		if i%2 == 0 {                                     // detached before or after it exits
			b.d.ThreadDetach(-1, uint64(c)+handleBase)
			b.d.ThreadExit(c)
		} else {
			b.d.ThreadExit(c)
			b.d.ThreadDetach(c, 0)
		}
	}
	if len(ids) > detachQuarantine+2 {
		t.Errorf("500 detached threads, one at a time, used %d ids", len(ids))
	}
	x, y := b.create(0, 0x400110), b.create(0, 0x400120)
	b.flush(x, wr(0x9000, 8, 0x400300))
	b.flush(y, wr(0x9000, 8, 0x400310))
	if n, out := b.finish(); n != 1 {
		t.Errorf("%d races, want 1 (the two live threads):\n%s", n, out)
	}
}
