package detect

import (
	"fmt"
	"sync"
	"testing"

	"hgrewrite/abi"
)

// condHandOff plays a producer and a consumer that hand data over through
// a flag under a mutex and a condition variable. The producer writes data
// (unlocked), then sets the flag in its region and signals. With waits,
// the consumer first waits inside its wait loop (the signal wakes it);
// without, the signal is lost: the consumer finds the flag set and leaves
// the loop without waiting. Either way it then reads data unlocked.
func condHandOff(t *testing.T, options string, waits bool) (int, string) {
	b := newBench(t, options)
	prod := b.create(0, 0x500)
	cons := b.create(0, 0x510)
	begin, end := uint64(abi.LockBegin), uint64(abi.LockEnd|abi.LockCVM|abi.LockRecord)
	if waits {
		b.region(cons).reads = []uint64{flag}
		b.flush(cons, lock(mu, begin), rd(flag, 4, 0x2001), unlock(mu, abi.LockWait))
	}
	b.region(prod).writes = []uint64{flag}
	b.flush(prod, wr(data, 8, 0x1001), lock(mu, begin), wr(flag, 4, 0x1002), signal(cv))
	b.region(prod).writes = nil // the signal took the region's writes
	b.flush(prod, unlock(mu, end))
	b.region(cons).reads = []uint64{flag}
	if waits {
		b.flush(cons, lock(mu, abi.LockWait), waitDone(cv, abi.WaitInLoop|abi.WaitWoke))
	} else {
		b.flush(cons, lock(mu, begin))
	}
	b.flush(cons, rd(flag, 4, 0x2001), loopExit(cv), unlock(mu, end))
	b.region(cons).reads = nil
	b.flush(cons, rd(data, 8, 0x2002))
	return b.finish()
}

// A wait loop's hand-off is ordered under every lsd setting when the
// consumer waited; a lost signal only with lsd=yes (the condition
// variable's segment) and lsd=wr (the write/read relation on the flag).
// The lock hand-off (handoff.go) is off here, so that the condition
// variable's handling is tested alone; with it, the consumer's read of the
// flag under the mutex orders it after the producer's region whatever lsd
// says.
func TestCondHandOff(t *testing.T) {
	for _, lsd := range []string{"no", "yes", "wr"} {
		for _, waits := range []bool{true, false} {
			t.Run(fmt.Sprintf("lsd=%s/waits=%v", lsd, waits), func(t *testing.T) {
				races, out := condHandOff(t, "handoff=no lsd="+lsd, waits)
				if lsd == "no" && !waits {
					wantReports(t, races, out, 1,
						"  Read of size 8 at 0x10100 by thread T2:\n",
						"  Previous write of size 8 by thread T1:\n")
					return
				}
				wantReports(t, races, out, 0)
			})
		}
	}
}

// Two signaller/waiter pairs share one condition variable (fig. 6.3):
// with lsd=wr each waiter is ordered after the signaller that wrote what it
// read only, so the second pair's data still races with the first waiter;
// with lsd=yes every waiter acquires every signal.
func TestCondSharedPairs(t *testing.T) {
	for _, lsd := range []string{"yes", "wr"} {
		t.Run("lsd="+lsd, func(t *testing.T) {
			b := newBench(t, "lsd="+lsd)
			p1, p2 := b.create(0, 0x500), b.create(0, 0x510)
			w1 := b.create(0, 0x520)
			begin, end := uint64(abi.LockBegin), uint64(abi.LockEnd|abi.LockCVM|abi.LockRecord)
			b.region(p1).writes = []uint64{flag}
			b.flush(p1, wr(data, 8, 0x1001), lock(mu, begin), wr(flag, 4, 0x1002), signal(cv))
			b.region(p2).writes = []uint64{flag + 8}
			b.flush(p2, wr(x, 8, 0x2001), lock(mu, begin), wr(flag+8, 4, 0x2002), signal(cv))
			b.region(w1).reads = []uint64{flag}
			b.flush(w1, lock(mu, begin), rd(flag, 4, 0x3001), loopExit(cv), unlock(mu, end))
			b.flush(w1, rd(data, 8, 0x3002), rd(x, 8, 0x3003))
			races, out := b.finish()
			if lsd == "yes" {
				wantReports(t, races, out, 0)
				return
			}
			wantReports(t, races, out, 1, "  Read of size 8 at 0x10000 by thread T3:\n")
		})
	}
}

// A spinning-read loop's hand-off: the counterpart write releases before
// the store, the condition load acquires after it; neither is reported.
// The same accesses as plain ones (spin=no) race on the flag and the data.
func TestSpinHandOff(t *testing.T) {
	b := newBench(t, "")
	t1 := b.create(0, 0x500)
	t2 := b.create(0, 0x510)
	b.flush(t2, spinLoad(flag, 0x2001))
	b.flush(t1, wr(data, 8, 0x1001), spinStore(flag, 0x1002))
	b.flush(t2, spinLoad(flag, 0x2001), rd(data, 8, 0x2002))
	races, out := b.finish()
	wantReports(t, races, out, 0)

	b = newBench(t, "spin=no")
	t1 = b.create(0, 0x500)
	t2 = b.create(0, 0x510)
	b.flush(t1, wr(data, 8, 0x1001), wr(flag, 4, 0x1002))
	b.flush(t2, rd(flag, 4, 0x2001), rd(data, 8, 0x2002))
	races, out = b.finish()
	wantReports(t, races, out, 2, "  Read of size 4 at 0x10200 by thread T2:\n", "  Read of size 8 at 0x10100 by thread T2:\n")
}

// Semaphore-style release/acquire orders two threads' accesses.
func TestReleaseAcquire(t *testing.T) {
	b := newBench(t, "")
	t1 := b.create(0, 0x500)
	t2 := b.create(0, 0x510)
	b.flush(t1, wr(data, 8, 0x1001))
	b.d.Release(t1, cv)
	b.d.Acquire(t2, cv)
	b.flush(t2, wr(data, 8, 0x2001))
	races, out := b.finish()
	wantReports(t, races, out, 0)
}

// A barrier orders what each thread did before it with what the others do
// after it.
func TestBarrier(t *testing.T) {
	b := newBench(t, "")
	t1 := b.create(0, 0x500)
	t2 := b.create(0, 0x510)
	b.d.BarrierInit(cv, 2)
	b.flush(t1, wr(x, 4, 0x1001))
	b.flush(t2, wr(data, 4, 0x2001))
	g1 := b.d.BarrierArrive(t1, cv)
	g2 := b.d.BarrierArrive(t2, cv)
	b.d.BarrierLeave(t1, cv, g1)
	b.d.BarrierLeave(t2, cv, g2)
	b.flush(t1, wr(data, 4, 0x1002))
	b.flush(t2, wr(x, 4, 0x2002))
	races, out := b.finish()
	wantReports(t, races, out, 0)
}

// Threads running concurrently, each on its own goroutine as the C side
// calls in on each program thread, increment a counter under a lock and
// keep private data: no report (and no data race in the detector, under
// go test -race).
func TestConcurrentThreads(t *testing.T) {
	b := newBench(t, "")
	const n = 4
	tids := make([]int32, n)
	for i := range tids {
		tids[i] = b.create(0, uint64(0x500+i))
	}
	var wg sync.WaitGroup
	for i, tid := range tids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			own := uint64(0x40000 + 0x100*i)
			for k := 0; k < 200; k++ {
				b.flush(tid, lock(mu, 0), rd(x, 4, 0x1001), wr(x, 4, 0x1002), unlock(mu, 0),
					wr(own, 8, 0x1003), rd(own, 8, 0x1004))
			}
			b.d.ThreadExit(tid)
		}()
	}
	wg.Wait()
	for _, tid := range tids {
		b.d.ThreadJoin(0, uint64(tid)+handleBase)
	}
	b.flush(0, wr(x, 4, 0x100))
	races, out := b.finish()
	wantReports(t, races, out, 0)
}

// atomicRMW is a lock-prefixed read-modify-write (or xchg) on addr: the
// release half before the instruction, the acquire half after it.
func atomicRMW(addr uint64, pc uint32) []Event {
	return []Event{
		{Addr: addr, Info: abi.Info(uint64(pc), 4, abi.Read|abi.Write|abi.Atomic)},
		{Addr: addr, Info: abi.Info(uint64(pc), 4, abi.Read|abi.Write|abi.Atomic|abi.Post)},
	}
}

// A word that an atomic instruction published is read with a plain move
// (x86 compiles an acquire load so: libstdc++'s futures test their state
// that way): the read acquires, so the data written before the exchange is
// ordered, and the flag itself is never reported.
func TestPlainLoadOfAtomicWord(t *testing.T) {
	b := newBench(t, "")
	w, r := b.create(0, 0x500), b.create(0, 0x510)
	b.flush(w, append([]Event{wr(data, 8, 0x1001)}, atomicRMW(flag, 0x1002)...)...)
	b.flush(r, rd(flag, 4, 0x2001), rd(data, 8, 0x2002), wr(flag, 4, 0x2003))
	races, out := b.finish()
	wantReports(t, races, out, 0)
}

// A 4-byte atomic word shares its 8-byte granule with a plain field (a
// reference count beside what it guards): the word synchronises, and the
// field is data of its own that still races, whether it was touched
// before the word became a synchronisation variable or after.
func TestAtomicWordBesidePlainField(t *testing.T) {
	const word, field = 0x10300, 0x10304
	for order := range 3 { // the field first touched by r, by w before the atomic, after it
		b := newBench(t, "")
		w, r := b.create(0, 0x500), b.create(0, 0x510)
		if order == 0 {
			b.flush(r, wr(field, 4, 0x2000))
		}
		if order == 2 {
			b.flush(w, atomicRMW(word, 0x1000)...)
		}
		b.flush(w, append([]Event{wr(data, 8, 0x1001), wr(field, 4, 0x1003)}, atomicRMW(word, 0x1002)...)...)
		if order != 0 {
			b.flush(r, wr(field, 4, 0x2000))
		}
		b.flush(r, rd(word, 4, 0x2001), rd(data, 8, 0x2002), rd(word, 4, 0x2004))
		races, out := b.finish()
		wantReports(t, races, out, 1, "Write of size 4 at 0x10304 by thread T", "Previous write of size 4 by thread T")
	}
}

// Without the atomic instruction the same plain accesses race.
func TestPlainFlagRaces(t *testing.T) {
	b := newBench(t, "")
	w, r := b.create(0, 0x500), b.create(0, 0x510)
	b.flush(w, wr(data, 8, 0x1001), wr(flag, 4, 0x1002))
	b.flush(r, rd(flag, 4, 0x2001), rd(data, 8, 0x2002))
	races, out := b.finish()
	wantReports(t, races, out, 2, "Read of size 8 at 0x10100 by thread T2:\n", "Read of size 4 at 0x10200 by thread T2:\n")
}

// The join rule must not invent a segment: two threads read a location and
// publish their pasts, a third acquires both and writes it after the first
// reader was joined while the second went on to later segments. The
// writer is ordered after both reads; taking the surviving reader's
// current segment as the location's would report the write.
func TestJoinRuleKeepsReadersSegments(t *testing.T) {
	b := newBench(t, "")
	r1, r2, w := b.create(0, 0x500), b.create(0, 0x510), b.create(0, 0x520)
	const objA, objB = 0x40000, 0x40100
	b.flush(r1, rd(x, 4, 0x1001))
	b.d.Release(r1, objA)
	b.flush(r2, rd(x, 4, 0x2001))
	b.d.Release(r2, objB)
	b.d.Acquire(w, objA)
	b.d.Acquire(w, objB)
	b.exitJoin(0, r1)
	b.d.Release(r2, objB+8) // r2 moves on: a later segment
	b.flush(w, wr(x, 4, 0x3001))
	races, out := b.finish()
	wantReports(t, races, out, 0)
}

func TestHeldLocksCountsHolds(t *testing.T) {
	var h heldLocks
	if h.take(1) != 1 || h.take(2) != 1 || h.take(1) != 2 {
		t.Fatalf("take: %v", h)
	}
	if h.count(1) != 2 || h.count(2) != 1 || h.count(3) != 0 || h.only(1) {
		t.Fatalf("count: %v", h)
	}
	if h.release(3) != 0 || h.release(1) != 2 || h.count(1) != 1 {
		t.Fatalf("release of a recursive hold: %v", h)
	}
	if h.release(1) != 1 || h.count(1) != 0 || len(h) != 1 || !h.only(2) {
		t.Fatalf("release of the last hold: %v", h)
	}
	if h.release(2) != 1 || len(h) != 0 || !h.only(7) {
		t.Fatalf("release of the only lock: %v", h)
	}
}

// The release stamps (syncClocks). A locked instruction's release half
// (an exchange) joins the word's clock and the thread's both ways and
// tells the thread the new stamp and that it holds the clock exactly;
// another thread's exchange moves the stamp past it, and orders that
// thread after the first. An acquire tells the stamp, not exactness. A
// plain release (a spin variable's counterpart store) tells nothing to a
// thread that knew nothing. An acquire the C side found to bring
// nothing new (abi.AcquireKnown) only ticks, once more for each tick
// merged into its event.
func TestSyncStamps(t *testing.T) {
	const w, w2 = 0x40000, 0x40100
	b := newBench(t, "")
	t1, t2 := b.create(0, 0x500), b.create(0, 0x510)
	exchange := ev(w, abi.Atomic|abi.Write, 0)
	acquire := ev(w, abi.Atomic|abi.Post|abi.Write, 0)
	stamp := func() uint64 {
		sh, st := b.d.syncVC.lock(w)
		defer unlockSlot(sh, st)
		return st.stamp.Load()
	}
	b.flush(t1, exchange)
	if r := b.region(t1); r.acquired[w] != stamp() || r.exact[w] == 0 {
		t.Fatalf("after an exchange: told stamp %d exact %d, the slot has %d", r.acquired[w], r.exact[w], stamp())
	}
	b.flush(t2, exchange)
	if s := b.region(t1).acquired[w]; s == stamp() {
		t.Fatalf("another thread's exchange left the stamp at %d, which T1 knows", s)
	}
	if b.d.thread(t2).vc.Get(uint16(t1)) == 0 {
		t.Fatalf("T2's exchange did not order it after T1's")
	}
	b.flush(t1, acquire)
	if r := b.region(t1); r.acquired[w] != stamp() || r.exact[w] != 0 {
		t.Fatalf("after an acquire: told stamp %d exact %d, the slot has %d", r.acquired[w], r.exact[w], stamp())
	}
	b.flush(t1, ev(w2, abi.Atomic|abi.Spin|abi.Write, 0))
	if s, ok := b.region(t1).acquired[w2]; ok {
		t.Fatalf("a plain release of a word it knew nothing of: told stamp %d", s)
	}
	th := b.d.thread(t1)
	before := th.vc.Get(uint16(t1))
	b.flush(t1, ev(w, abi.Atomic|abi.Post|abi.Write, abi.AcquireKnown))
	if after := th.vc.Get(uint16(t1)); after != before+1 {
		t.Fatalf("an acquire of nothing new: clock %d -> %d, want one tick", before, after)
	}
	// three more segments the C side began right after, merged into
	// one event (hg_tick_event)
	b.flush(t1, ev(w, abi.Atomic, abi.ReleaseKnown|3<<abi.TicksShift))
	if after := th.vc.Get(uint16(t1)); after != before+5 {
		t.Fatalf("a release and three merged ticks: clock %d -> %d, want four ticks more", before+1, after)
	}
}

// The object's clock in its slot, for the C side (syncStamp.keepSmall):
// a release writes the components; what the C side wrote there
// (abi.SyncSmallC, as hg_exchange_c would) goes into the object's clock
// before the Go side next reads it, so a later acquire takes it in; a
// clock of more components than the slot holds is marked not valid. A
// raise the C side made (abi.ClockRaise) is a join of one component.
func TestSyncSmallClocks(t *testing.T) {
	const w = 0x40000
	b := newBench(t, "")
	t1, t2 := b.create(0, 0x500), b.create(0, 0x510)
	exchange := ev(w, abi.Atomic|abi.Write, 0)
	slot := func() (meta uint64, comps map[uint16]uint64) {
		sh, st := b.d.syncVC.lock(w)
		defer unlockSlot(sh, st)
		comps = map[uint16]uint64{}
		for i := range int(st.meta.Load() & 0xff) {
			p := st.small[i].Load()
			comps[uint16(p>>48)] = p & (1<<48 - 1)
		}
		return st.meta.Load(), comps
	}
	b.flush(t1, exchange)
	th1 := b.d.thread(t1)
	if meta, comps := slot(); meta&abi.SyncSmallValid == 0 || comps[uint16(t1)] != th1.vc.Get(uint16(t1))-1 {
		t.Fatalf("after T1's exchange: meta %#x, components %v, T1's clock %v", meta, comps, th1.vc)
	}

	// T2's exchange made in C: the word's clock takes T2's component,
	// T2's clock T1's (a raise event)
	th2 := b.d.thread(t2)
	c1, c2 := th1.vc.Get(uint16(t1))-1, th2.vc.Get(uint16(t2))
	_, st := b.d.syncVC.lock(w)
	st.small[0].Store(uint64(t1)<<48 | c1)
	st.small[1].Store(uint64(t2)<<48 | c2)
	st.meta.Store(2 | abi.SyncSmallValid | abi.SyncSmallC)
	st.stamp.Add(1)
	st.seq.unlock() // as the C side gives it back: no keepSmall
	b.d.syncVC.shards[segSlotIndex(w, syncStampBits)%syncShards].mu.Unlock()
	b.flush(t2, ev(uint64(t1)<<48|c1, abi.Atomic|abi.Post|abi.Write, abi.ClockRaise))
	if got := th2.vc.Get(uint16(t1)); got != c1 {
		t.Fatalf("a raise of T1's component to %d: T2 holds %d", c1, got)
	}
	b.flush(t1, ev(w, abi.Atomic|abi.Post|abi.Write, 0)) // T1's acquire of the word
	if got := th1.vc.Get(uint16(t2)); got < c2 {
		t.Fatalf("T1's acquire after T2's exchange in C: T1 holds T2 at %d, want %d", got, c2)
	}
	if meta, _ := slot(); meta&abi.SyncSmallC != 0 {
		t.Fatalf("the C side's components not folded in: meta %#x", meta)
	}

	// more threads than the slot has room for
	for range abi.SyncSmall {
		b.flush(b.create(0, 0x520), exchange)
	}
	if meta, _ := slot(); meta&abi.SyncSmallValid != 0 {
		t.Fatalf("a clock of more than %d components: meta %#x says valid", abi.SyncSmall, meta)
	}
}
