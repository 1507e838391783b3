package detect

import (
	"fmt"
	"slices"
	"sync"
	"testing"
)

// TestCreateStack: the creator's stack as the wrapper captured it keeps
// the program's frames only (the wrapper's own above them, and the
// runtime's below them, go); createPC is the innermost call (ra-1); the
// report lists every frame at its call.
func TestCreateStack(t *testing.T) {
	b := newBench(t, "")
	t1 := b.d.ThreadCreate(0, []uint64{runtimeCode + 8, 0x2040, 0x2100, runtimeCode + 16, 0x3000})
	if t1 < 0 {
		t.Fatal("ThreadCreate failed")
	}
	c := b.d.thread(t1)
	if !slices.Equal(c.createStack, []uint64{0x2040, 0x2100}) || c.createPC != 0x203f {
		t.Errorf("createStack %#x, createPC %#x; want [0x2040 0x2100], 0x203f", c.createStack, c.createPC)
	}
	t2 := b.create(0, 0x510)
	b.flush(t1, wr(x, 4, 0x1001))
	b.flush(t2, wr(x, 4, 0x2002))
	races, out := b.finish()
	wantReports(t, races, out, 1,
		"  Thread T1 created by T0 at:\n    #0 0x203f (program+0x203f)\n    #1 0x20ff (program+0x20ff)\n  ",
		"  Thread T2 created by T0 at:\n    #0 0x50f (program+0x50f)\n  ")
}

// A forked child's creator passes the wrapper's return address alone: a
// one-frame stack, as before stacks were captured; one from a library
// (not the main program) has no createPC but keeps its frame.
func TestCreateStackOneFrame(t *testing.T) {
	b := newBench(t, "")
	lib := &libHost{fakeHost: b.host}
	b.d.host = lib
	t1 := b.d.ThreadCreate(0, []uint64{libCode + 0x40})
	c := b.d.thread(t1)
	if !slices.Equal(c.createStack, []uint64{libCode + 0x40}) || c.createPC != 0 {
		t.Errorf("createStack %#x, createPC %#x; want [%#x], 0", c.createStack, c.createPC, libCode+0x40)
	}
}

// libHost is a fakeHost in which addresses from libCode up (below the
// runtime's) are a shared library's: not the main program.
type libHost struct{ *fakeHost }

const libCode = 0x7e000000

func (h *libHost) LinkPC(ra uint64) uint64 {
	if ra >= libCode {
		return 0
	}
	return ra
}

// Threads named by themselves, by another thread through their pthread_t,
// and the main thread, are named in reports; a name survives as the
// earlier thread's when its id is reused; a joined thread's pthread_t
// names nothing any more.
func TestThreadName(t *testing.T) {
	b := newBench(t, "")
	const mainHandle = 0x77
	b.d.ThreadHandle(0, mainHandle)
	if got := b.d.HandleThread(mainHandle); got != 0 {
		t.Fatalf("main's handle names T%d", got)
	}
	b.d.ThreadName(b.d.HandleThread(mainHandle), "boss")
	t1 := b.create(0, 0x500)
	b.d.ThreadName(t1, "first")
	b.flush(t1, wr(x, 8, 0x1001))
	b.exitJoin(0, t1)
	if got := b.d.HandleThread(uint64(t1) + handleBase); got != -1 {
		t.Errorf("a joined thread's handle names T%d, want none", got)
	}
	t2 := b.create(0, 0x510)
	if t2 != t1 {
		t.Fatalf("T%d not reused: T%d", t1, t2)
	}
	if got := b.d.threadName(t2); got != "" {
		t.Errorf("the new T%d inherits the name %q", t2, got)
	}
	t3 := b.create(0, 0x520)
	b.d.ThreadName(b.d.HandleThread(uint64(t3)+handleBase), "worker")
	b.flush(t3, wr(data, 8, 0x3001))
	b.flush(0, wr(data, 8, 0x0901)) // main vs T3
	b.flush(t2, wr(x, 8, 0x2001))
	b.flush(t3, wr(x, 8, 0x3002)) // T3 vs the new T1
	races, out := b.finish()
	wantReports(t, races, out, 2,
		"  Thread T0 'boss' is the main thread.\n",
		fmt.Sprintf("  Thread T%d 'worker' created by T0 at:\n    #0 0x51f (program+0x51f)\n", t3),
		fmt.Sprintf("  Thread T%d created by T0 at:\n    #0 0x50f (program+0x50f)\n", t1),
		fmt.Sprintf("  Earlier T%d 'first' (1 back) created by T0 at:\n    #0 0x4ff (program+0x4ff)\n", t1))
	// the main thread's handle is for naming only: joining it frees no id
	b.d.ThreadJoin(t3, mainHandle)
	if b.d.thread(0).released {
		t.Error("joining the main thread's handle released its id")
	}
}

// Names are written by one thread and read by the reporter on another:
// run with -race, this checks they are guarded.
func TestThreadNameConcurrent(t *testing.T) {
	b := newBench(t, "")
	t1 := b.create(0, 0x500)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 1000; i++ {
			b.d.ThreadName(t1, fmt.Sprint("w", i))
		}
	}()
	for i := 0; i < 1000; i++ {
		if n := b.d.threadName(t1); n != "" && n[0] != 'w' {
			t.Fatalf("name %q", n)
		}
	}
	wg.Wait()
	if n := b.d.threadName(t1); n != "w999" {
		t.Errorf("last name %q, want w999", n)
	}
}
