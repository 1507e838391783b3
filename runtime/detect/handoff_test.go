package detect

import (
	"strings"
	"testing"
	"unsafe"

	"hgrewrite/abi"
)

const (
	head = 0x10300 // a queue head or reference count, guarded by mu
	mu2  = 0x20040 // another mutex
)

var (
	begin = uint64(abi.LockBegin)
	end   = uint64(abi.LockEnd | abi.LockRecord) // the C side hands the region over at its unlock
)

// queueHandOff plays a producer that fills an item without a lock and
// publishes it by writing the queue head under mu, and a consumer that
// takes the head under consumerMutex and then uses the item without a
// lock.
func queueHandOff(t *testing.T, options string, consumerMutex uint64) (int, string) {
	b := newBench(t, options)
	prod, cons := b.create(0, 0x500), b.create(0, 0x510)
	b.region(prod).writes = []uint64{head}
	b.flush(prod, wr(data, 8, 0x1001), lock(mu, begin), wr(head, 8, 0x1002), unlock(mu, end))
	b.region(cons).reads = []uint64{head}
	b.flush(cons, lock(consumerMutex, begin), rd(head, 8, 0x2001), unlock(consumerMutex, end))
	b.flush(cons, rd(data, 8, 0x2002), wr(data, 8, 0x2003))
	return b.finish()
}

// An item handed over through a mutex-protected queue is ordered: the
// consumer's region read what the producer's region wrote.
func TestHandOffQueue(t *testing.T) {
	races, out := queueHandOff(t, "", mu)
	wantReports(t, races, out, 0)
}

// Without hand-offs (the dissertation's hybrid algorithm), the same
// program reports the item.
func TestHandOffOff(t *testing.T) {
	races, out := queueHandOff(t, "handoff=no", mu)
	wantReports(t, races, out, 1, "Previous write of size 8 by thread T1:\n")
}

// A relation needs the same mutex: a consumer reading the head under
// another mutex learns nothing from the producer's region, so its use of
// the item is reported (its write, which covers the read before it), and
// so is the head itself, guarded by two different mutexes.
func TestHandOffOtherMutex(t *testing.T) {
	races, out := queueHandOff(t, "", mu2)
	wantReports(t, races, out, 2, "Write of size 8 at 0x10100 by thread T2:\n",
		"Read of size 8 at 0x10300 by thread T2:\n    #0 0x2001 (program+0x2001)\n  Previous write of size 8 by thread T1:\n    #0 0x1002")
}

// A lock held in read mode orders nothing: a thread that writes under a
// read lock (a bug of its own) hands nothing to the next holder, which
// may have held the lock at the same time.
func TestHandOffReadLock(t *testing.T) {
	b := newBench(t, "")
	prod, cons := b.create(0, 0x500), b.create(0, 0x510)
	b.region(prod).writes = []uint64{head}
	b.flush(prod, wr(data, 8, 0x1001), lock(mu, begin|abi.LockRead), wr(head, 8, 0x1002), unlock(mu, end))
	b.region(cons).reads = []uint64{head}
	b.flush(cons, lock(mu, begin|abi.LockRead), rd(head, 8, 0x2001), unlock(mu, end))
	b.flush(cons, rd(data, 8, 0x2002))
	races, out := b.finish()
	wantReports(t, races, out, 2, "Read of size 8 at 0x10300 by thread T2:\n", "Read of size 8 at 0x10100 by thread T2:\n")
}

// A lock taken in between without data passing through it orders nothing:
// a write under the lock and a later write made after taking the lock but
// outside it still race (the hybrid's strength over pure happens-before,
// which orders the two through the lock).
func TestHandOffNeedsData(t *testing.T) {
	b := newBench(t, "")
	a, c := b.create(0, 0x500), b.create(0, 0x510)
	b.region(a).writes = []uint64{data}
	b.flush(a, lock(mu, begin), wr(data, 8, 0x1001), unlock(mu, end))
	b.region(c).reads = []uint64{head}
	b.flush(c, lock(mu, begin), rd(head, 8, 0x2001), unlock(mu, end), wr(data, 8, 0x2002))
	races, out := b.finish()
	wantReports(t, races, out, 1, "Write of size 8 at 0x10100 by thread T2:\n", "Previous write of size 8 by thread T1:\n")
}

// With data passing through the lock, the same accesses are ordered.
func TestHandOffWithData(t *testing.T) {
	b := newBench(t, "")
	a, c := b.create(0, 0x500), b.create(0, 0x510)
	b.region(a).writes = []uint64{data}
	b.flush(a, lock(mu, begin), wr(data, 8, 0x1001), unlock(mu, end))
	b.region(c).reads = []uint64{data}
	b.flush(c, lock(mu, begin), rd(data, 8, 0x2001), unlock(mu, end), wr(data, 8, 0x2002))
	races, out := b.finish()
	wantReports(t, races, out, 0)
}

// A reference count decremented under the mutex orders the last owner's
// free after every other owner's use of the object.
func TestHandOffRefCount(t *testing.T) {
	b := newBench(t, "")
	b.flush(0, alloc(blk, 64, 0x100), wr(blk, 8, 0x101), wr(head, 8, 0x102))
	a, c := b.create(0, 0x500), b.create(0, 0x510)
	b.region(a).reads, b.region(a).writes = []uint64{head}, []uint64{head}
	b.flush(a, rd(blk, 8, 0x1001), lock(mu, begin), rd(head, 8, 0x1002), wr(head, 8, 0x1003), unlock(mu, end))
	b.region(c).reads, b.region(c).writes = []uint64{head}, []uint64{head}
	b.flush(c, rd(blk, 8, 0x2001), lock(mu, begin), rd(head, 8, 0x2002), wr(head, 8, 0x2003), unlock(mu, end))
	if n := b.d.Free(c, blk, 64, 0x2004); n != 0 {
		t.Errorf("free: %d reports pending", n)
	}
	races, out := b.finish()
	wantReports(t, races, out, 0)
}

// A notifier that signals after its unlock (the C++ idiom) publishes the
// ended region's writes again at the signal; they stay the region's, under
// its mutex, so a waiter that finds the flag set under the mutex is
// ordered after the notifier whatever lsd says.
func TestHandOffSignalAfterUnlock(t *testing.T) {
	for _, lsd := range []string{"no", "yes", "wr"} {
		t.Run("lsd="+lsd, func(t *testing.T) {
			b := newBench(t, "lsd="+lsd)
			prod, cons := b.create(0, 0x500), b.create(0, 0x510)
			b.region(prod).writes = []uint64{flag}
			b.flush(prod, wr(data, 8, 0x1001), lock(mu, begin), wr(flag, 4, 0x1002), unlock(mu, end), signal(cv))
			b.region(cons).reads = []uint64{flag}
			b.flush(cons, lock(mu, begin), rd(flag, 4, 0x2001), unlock(mu, end), rd(data, 8, 0x2002))
			races, out := b.finish()
			wantReports(t, races, out, 0)
		})
	}
}

// A region whose unlock the C side did not hand over at once (it recorded
// no writes) publishes nothing, even though the thread's record by then
// holds a later region's writes.
func TestHandOffStaleRecord(t *testing.T) {
	b := newBench(t, "")
	a, c := b.create(0, 0x500), b.create(0, 0x510)
	b.region(a).writes = []uint64{flag} // a later region's
	b.flush(a, wr(data, 8, 0x1001), lock(mu, begin), unlock(mu, abi.LockEnd))
	b.region(c).reads = []uint64{flag}
	b.flush(c, lock(mu, begin), rd(flag, 4, 0x2001), unlock(mu, end), rd(data, 8, 0x2002))
	races, out := b.finish()
	wantReports(t, races, out, 1, "Read of size 8 at 0x10100 by thread T2:\n")
}

// A producer that hands an item over under an inner lock while holding an
// outer one publishes the inner region's writes when it releases the inner
// lock; a consumer that takes only the inner lock is ordered after it.
func TestHandOffNestedLock(t *testing.T) {
	b := newBench(t, "")
	prod, cons := b.create(0, 0x500), b.create(0, 0x510)
	b.region(prod).writes = []uint64{x, head}
	nested := uint64(abi.LockNested|abi.LockRecord) | 1<<abi.LockMarkShift
	b.flush(prod, wr(data, 8, 0x1001), lock(mu2, begin), wr(x, 8, 0x1002), lock(mu, 0), wr(head, 8, 0x1003), unlock(mu, nested))
	b.region(cons).reads = []uint64{head}
	b.flush(cons, lock(mu, begin), rd(head, 8, 0x2001), unlock(mu, end), rd(data, 8, 0x2002))
	b.flush(prod, unlock(mu2, end))
	races, out := b.finish()
	wantReports(t, races, out, 0)
}

// waitHandOff plays lbzip2's workers: a worker fills an item without a lock
// (transmit), puts it on a queue under the scheduler's mutex and, with
// nothing left to do, waits on a condition variable inside the same region;
// another worker takes the mutex while it sleeps, takes the item off the
// queue and uses it without the lock. waitMode is the Unlock event of the
// wait.
func waitHandOff(t *testing.T, waitMode uint64) (int, string) {
	b := newBench(t, "")
	prod, cons := b.create(0, 0x500), b.create(0, 0x510)
	b.region(prod).writes = []uint64{head}
	b.flush(prod, wr(data, 8, 0x1001), lock(mu, begin), wr(head, 8, 0x1002), unlock(mu, waitMode))
	b.region(cons).reads = []uint64{head}
	b.flush(cons, lock(mu, begin), rd(head, 8, 0x2001), unlock(mu, end), wr(data, 8, 0x2002))
	// the producer wakes up; its region ends with nothing left to publish
	b.flush(prod, lock(mu, abi.LockWait), waitDone(cv, abi.WaitWoke), unlock(mu, abi.LockEnd))
	return b.finish()
}

// A condition wait inside a region releases the mutex: the C side hands
// the writes recorded so far over first (LockWait|LockRecord), and the
// thread that takes the mutex while the writer sleeps is ordered after
// them.
func TestHandOffWait(t *testing.T) {
	races, out := waitHandOff(t, abi.LockWait|abi.LockRecord)
	wantReports(t, races, out, 0)
}

// A wait that publishes nothing (handoff=no, or no writes recorded) is a
// plain release of the lockset: the item's use is reported.
func TestHandOffWaitUnpublished(t *testing.T) {
	races, out := waitHandOff(t, abi.LockWait)
	wantReports(t, races, out, 1, "Write of size 8 at 0x10100 by thread T2:\n", "Previous write of size 8 by thread T1:\n")
}

// A wait on a lock taken inside the region publishes only the writes made
// since that lock was taken (the record's writes from its mark on): a
// variable written before, under the outer mutex alone, is not handed over
// through the inner one. Reading it under the inner mutex alone is then a
// race of its own (two different mutexes), reported too.
func TestHandOffWaitNested(t *testing.T) {
	for _, c := range []struct {
		name  string
		read  uint64
		races int
	}{{"since the lock", head, 0}, {"before the lock", x, 2}} {
		t.Run(c.name, func(t *testing.T) {
			b := newBench(t, "")
			prod, cons := b.create(0, 0x500), b.create(0, 0x510)
			b.region(prod).writes = []uint64{x, head}
			wait := uint64(abi.LockWait|abi.LockRecord) | 1<<abi.LockMarkShift
			b.flush(prod, wr(data, 8, 0x1001), lock(mu2, begin), wr(x, 8, 0x1002), lock(mu, 0), wr(head, 8, 0x1003), unlock(mu, wait))
			b.region(cons).reads = []uint64{c.read}
			b.flush(cons, lock(mu, begin), rd(c.read, 8, 0x2001), unlock(mu, end), wr(data, 8, 0x2002))
			races, out := b.finish()
			if c.races == 0 {
				wantReports(t, races, out, 0)
			} else {
				wantReports(t, races, out, c.races, "Write of size 8 at 0x10100 by thread T2:\n",
					"Read of size 8 at 0x10000 by thread T2:\n    #0 0x2001 (program+0x2001)\n  Previous write of size 8 by thread T1:\n    #0 0x1002")
			}
		})
	}
}

// registry plays readers that look an object up (the entry at head) and
// use it under mu, and a remover that unlinks the entry under
// removerMutex and frees the object after unlocking.
func registry(t *testing.T, removerMutex uint64) (int, string) {
	b := newBench(t, "")
	r1, r2, rem := b.create(0, 0x500), b.create(0, 0x510), b.create(0, 0x520)
	for i, r := range []int32{r1, r2} {
		pc := uint32(0x1001 + 0x1000*i)
		b.region(r).reads = []uint64{head, data}
		b.flush(r, lock(mu, begin), rd(head, 8, pc), rd(data, 8, pc+1), unlock(mu, end))
	}
	b.region(rem).writes = []uint64{head}
	b.flush(rem, lock(removerMutex, begin), wr(head, 8, 0x3001), unlock(removerMutex, end))
	b.flush(rem, wr(data, 8, 0x3002))
	return b.finish()
}

// Reverse hand-offs: a region that writes what earlier regions read under
// the same mutex is ordered after them, so the remover's later release
// of the object is not a race with the readers' uses.
func TestHandOffReverse(t *testing.T) {
	races, out := registry(t, mu)
	wantReports(t, races, out, 0)
}

// Under another mutex the remover learns nothing from the readers: the
// object's release races with their reads (and so does the entry).
func TestHandOffReverseOtherMutex(t *testing.T) {
	races, out := registry(t, mu2)
	wantReports(t, races, out, 2, "Write of size 8 at 0x10100 by thread T3:\n", "Write of size 8 at 0x10300 by thread T3:\n")
}

// The hybrid's strength stays: regions that do not touch the same data
// order nothing, so an unlocked write that only the order of two
// critical sections separates from another thread's write is reported.
func TestHandOffUnrelatedRegions(t *testing.T) {
	b := newBench(t, "")
	t1, t2 := b.create(0, 0x500), b.create(0, 0x510)
	b.region(t1).reads = []uint64{flag}
	b.flush(t1, wr(x, 4, 0x1001), lock(mu, begin), rd(flag, 4, 0x1002), unlock(mu, end))
	b.region(t2).writes = []uint64{head}
	b.flush(t2, lock(mu, begin), wr(head, 8, 0x2001), unlock(mu, end), wr(x, 4, 0x2002))
	races, out := b.finish()
	wantReports(t, races, out, 1, "Write of size 4 at 0x10000 by thread T2:\n", "Previous write of size 4 by thread T1:\n")
}

// tinyTables leaves the hand-off tables one slot each, so that every
// later publication evicts earlier ones into the slot's overflow.
func tinyTables(b *bench) {
	b.d.wrSeg = &wrSegs{newSegTable(0, nil)}
	b.d.rdSeg = newReadLog(0, nil)
}

// A hand-off survives eviction: between the publication and the use,
// other threads' regions under another mutex publish more variables than
// the tables hold, and the relation lives on in the overflow, for the
// producer's writes (forward) and the readers' reads (reverse).
func TestHandOffEvicted(t *testing.T) {
	for _, reverse := range []bool{false, true} {
		b := newBench(t, "")
		tinyTables(b)
		t1, t2, noise := b.create(0, 0x500), b.create(0, 0x510), b.create(0, 0x520)
		if reverse {
			b.region(t1).reads = []uint64{head}
			b.flush(t1, rd(data, 8, 0x1001), lock(mu, begin), rd(head, 8, 0x1002), unlock(mu, end))
		} else {
			b.region(t1).writes = []uint64{head}
			b.flush(t1, wr(data, 8, 0x1001), lock(mu, begin), wr(head, 8, 0x1002), unlock(mu, end))
		}
		for i := uint64(0); i < 3*segWays; i++ {
			// the reader log keeps a thread's reads under one mutex in
			// one way: other mutexes take the others
			v, m := 0x30000+8*i, mu2+0x100*i
			b.region(noise).reads, b.region(noise).writes = []uint64{v}, []uint64{v}
			b.flush(noise, lock(m, begin), rd(v, 8, 0x3001), wr(v, 8, 0x3002), unlock(m, end))
		}
		if reverse {
			b.region(t2).writes = []uint64{head}
			b.flush(t2, lock(mu, begin), wr(head, 8, 0x2001), unlock(mu, end), wr(data, 8, 0x2002))
		} else {
			b.region(t2).reads = []uint64{head}
			b.flush(t2, lock(mu, begin), rd(head, 8, 0x2001), unlock(mu, end), wr(data, 8, 0x2002))
		}
		races, out := b.finish()
		wantReports(t, races, out, 0)
	}
}

// The overflow holds for its mutexes only: a thread that takes another
// mutex is not ordered after the evicted segments, and the unlocked
// accesses on both sides of it are reported.
func TestHandOffEvictedOtherMutex(t *testing.T) {
	b := newBench(t, "")
	tinyTables(b)
	t1, t2, noise := b.create(0, 0x500), b.create(0, 0x510), b.create(0, 0x520)
	b.region(t1).writes = []uint64{head}
	b.flush(t1, wr(data, 8, 0x1001), lock(mu, begin), wr(head, 8, 0x1002), unlock(mu, end))
	for i := uint64(0); i < 3*segWays; i++ {
		v := 0x30000 + 8*i
		b.region(noise).writes = []uint64{v}
		b.flush(noise, lock(mu, begin), wr(v, 8, 0x3002), unlock(mu, end))
	}
	b.region(t2).reads = []uint64{head}
	b.flush(t2, lock(mu2, begin), rd(head, 8, 0x2001), unlock(mu2, end), wr(data, 8, 0x2002))
	races, out := b.finish()
	wantReports(t, races, out, 2, "Write of size 8 at 0x10100 by thread T2:\n", "Read of size 8 at 0x10300 by thread T2:\n")
}

// A published segment fits the 32-byte size class (handoff.go, wrSeg):
// lock-heavy programs keep tens of thousands alive.
func TestWrSegSize(t *testing.T) {
	if n := unsafe.Sizeof(wrSeg{}); n > 32 {
		t.Errorf("wrSeg is %d bytes, more than 32", n)
	}
}

// BenchmarkRegionHandOff is the Go side's work per lock-protected region
// of a lock-heavy program (bench/locks.c's shape): two threads take turns
// on 64 striped mutexes, each region reading four words and writing two
// of a table of 4,096, which the other thread's regions wrote before. A
// region is one flush: its lock, accesses that reached the Go side, and
// the unlock that publishes it.
func BenchmarkRegionHandOff(b *testing.B) {
	bn := newBench(b, "exitcode=0")
	threads := [2]int32{bn.create(0, 0x500), bn.create(0, 0x510)}
	const table, words, stripes = 0x100000, 4096, 64
	seed := uint64(1)
	reads, writes, events := make([]uint64, 4), make([]uint64, 2), make([]Event, 4)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		tid := threads[i%2]
		seed = seed*6364136223846793005 + 1442695040888963407
		w := seed >> 33 % words
		m := 0x9000 + w%stripes*0x40
		for j := range reads {
			reads[j] = table + (w+uint64(j)*stripes)%words*8
		}
		writes[0], writes[1] = reads[0], reads[3]
		r := bn.region(tid)
		r.reads, r.writes = reads, writes
		events[0], events[1], events[2], events[3] = lock(m, begin), rd(reads[0], 8, 0x1001), wr(writes[0], 8, 0x1002), unlock(m, end)
		bn.flush(tid, events...)
	}
}

// BenchmarkQueueHandOff is the Go side's work per item of a queue under
// a mutex with a condition variable (bench/pipeline.c's shape): a
// producer's region writes the slot, the tail and the count and signals;
// the consumer's region leaves its wait loop, reads them and writes the
// head and the count. Two regions an iteration.
func BenchmarkQueueHandOff(b *testing.B) {
	bn := newBench(b, "exitcode=0")
	prod, cons := bn.create(0, 0x500), bn.create(0, 0x510)
	const q, cv = 0x300000, 0x300800
	cvEnd := end | uint64(abi.LockCVM)
	tail, headW, count := uint64(q+0x200), uint64(q+0x208), uint64(q+0x210)
	pw, cr, cw := make([]uint64, 3), make([]uint64, 3), make([]uint64, 2)
	pev, cev := make([]Event, 6), make([]Event, 6)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		s := q + uint64(i%64)*8
		pw[0], pw[1], pw[2] = s, tail, count
		r := bn.region(prod)
		r.reads, r.writes = cr[:0], pw
		pev[0], pev[1], pev[2], pev[3], pev[4], pev[5] = lock(mu, begin), rd(count, 8, 0x1001), wr(s, 8, 0x1002),
			wr(count, 8, 0x1003), signal(cv), unlock(mu, cvEnd)
		bn.flush(prod, pev...)
		cr[0], cr[1], cr[2] = count, headW, s
		cw[0], cw[1] = headW, count
		r = bn.region(cons)
		r.reads, r.writes = cr, cw
		cev[0], cev[1], cev[2], cev[3], cev[4], cev[5] = lock(mu, begin), loopExit(cv), rd(s, 8, 0x2001),
			wr(count, 8, 0x2002), signal(cv+8), unlock(mu, cvEnd)
		bn.flush(cons, cev...)
	}
}

// A signal that travels with its region's hand-over (abi.SignalAtEnd)
// publishes nothing itself; the region's end publishes every write, those
// after the signal included, and a consumer that reads either is ordered
// after the producer.
func TestHandOffSignalAtEnd(t *testing.T) {
	for _, read := range []uint64{flag, head} {
		b := newBench(t, "")
		prod, cons := b.create(0, 0x500), b.create(0, 0x510)
		b.region(prod).writes = []uint64{flag, head}
		b.flush(prod, wr(data, 8, 0x1001), lock(mu, begin), wr(flag, 4, 0x1002),
			ev(cv, abi.Signal, abi.SignalAtEnd), wr(head, 8, 0x1003), unlock(mu, end|uint64(abi.LockCVM)))
		b.region(cons).reads = []uint64{read}
		b.flush(cons, lock(mu, begin), rd(read, 4, 0x2001), unlock(mu, end), rd(data, 8, 0x2002))
		races, out := b.finish()
		wantReports(t, races, out, 0)
	}
}

// A waiter's region end looks for write/read relations among the reads
// made after its wait loop was left (dissertation fig. 6.7): the producer
// published the item's link under another mutex, which no hand-off
// follows, and the consumer read it only after the loop's exit, which the
// Go side handled in an earlier flush (the buffer filled up, say). Reads
// the exit's relations took in are not searched again.
func TestWaitRegionEndJoinsReadsAfterWait(t *testing.T) {
	for _, readAfter := range []bool{true, false} {
		b := newBench(t, "")
		prod, cons := b.create(0, 0x500), b.create(0, 0x510)
		b.region(prod).writes = []uint64{head}
		b.flush(prod, wr(data, 8, 0x1001), lock(mu2, begin), wr(head, 8, 0x1002), unlock(mu2, end))
		b.region(cons).reads = []uint64{flag}
		b.flush(cons, lock(mu, begin), rd(flag, 4, 0x2001), loopExit(cv))
		var events []Event
		if readAfter {
			b.region(cons).reads = append(b.region(cons).reads, head)
			events = append(events, rd(head, 8, 0x2003))
		}
		b.flush(cons, append(events, unlock(mu, end), rd(data, 8, 0x2002))...)
		races, out := b.finish()
		if readAfter {
			// the read of the link itself, under mu against a write
			// under mu2, is a race of its own; the data is ordered
			wantReports(t, races, out, 1, "Read of size 8 at 0x10300 by thread T2:\n")
			if strings.Contains(out, "at 0x10100") {
				t.Errorf("the data's read is reported:\n%s", out)
			}
			continue
		}
		wantReports(t, races, out, 1, "Read of size 8 at 0x10100 by thread T2:\n")
	}
}
