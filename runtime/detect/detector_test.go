package detect

import (
	"strings"
	"testing"

	"hgrewrite/abi"
)

// Addresses used by the traces: data, a mutex, a condition variable, a
// heap block. Code addresses (pcs) are small link-time addresses.
const (
	x    = 0x10000
	data = 0x10100
	flag = 0x10200
	mu   = 0x20000
	cv   = 0x20100
	blk  = 0x30000
)

// Two threads write one location without synchronisation: one report,
// naming both accesses (thread, kind, size, pc), the creation sites, and
// printed with the racing thread's stack once it is known.
func TestUnorderedWritesRace(t *testing.T) {
	b := newBench(t, "")
	t1 := b.create(0, 0x500)
	t2 := b.create(0, 0x510)
	b.flush(t1, wr(x, 4, 0x1001))
	if n := b.flush(t2, wr(x, 4, 0x2002)); n != 1 {
		t.Fatalf("%d reports pending, want 1", n)
	}
	b.d.Stack(t2, CallStack{RA: []uint64{runtimeCode + 8, 0x2040, 0x2100}})
	races, out := b.finish()
	wantReports(t, races, out, 1,
		"WARNING: hgrewrite: data race",
		"  Write of size 4 at 0x10000 by thread T2:\n    #0 0x2002 (program+0x2002)\n",
		"  Previous write of size 4 by thread T1:\n    #0 0x1001 (program+0x1001)\n",
		"  Location at 0x10000 is not a global variable or live heap block of program",
		"  Locks held by T2: none\n",
		"  Thread T2 created by T0 at:\n    #0 0x50f (program+0x50f)\n", // the call: ra-1
		"  Thread T1 created by T0 at:\n    #0 0x4ff (program+0x4ff)\n",
		"  Detected by MSM-short: the location is now in state Race.\n",
		// the runtime's frame is dropped; return addresses show the call (ra-1)
		"after the access:\n    #0 0x203f (program+0x203f)\n    #1 0x20ff (program+0x20ff)\n",
		"SUMMARY: hgrewrite: 1 data race(s) reported in program\n")
}

// The report of a read against a write names the kinds, with the previous
// access in lower case, and a later access of the same pair of pcs is not
// reported again.
func TestReadAfterWriteReportedOnce(t *testing.T) {
	b := newBench(t, "")
	t1 := b.create(0, 0x500)
	t2 := b.create(0, 0x510)
	b.flush(t1, wr(x, 8, 0x1001))
	b.flush(t2, rd(x, 2, 0x2002), rd(x+4, 2, 0x2002))
	races, out := b.finish()
	wantReports(t, races, out, 1,
		"  Read of size 2 at 0x10000 by thread T2:\n",
		"  Previous write of size 8 by thread T1:\n")
	if strings.Count(out, "WARNING") != 1 {
		t.Errorf("want one report:\n%s", out)
	}
}

// Create and join order a parent's and a child's accesses: no report.
func TestCreateJoinOrders(t *testing.T) {
	b := newBench(t, "")
	b.flush(0, wr(x, 4, 0x100))
	t1 := b.create(0, 0x500)
	b.flush(t1, rd(x, 4, 0x1001), wr(x, 4, 0x1002))
	b.exitJoin(0, t1)
	b.flush(0, wr(x, 4, 0x101), rd(x, 4, 0x102))
	races, out := b.finish()
	wantReports(t, races, out, 0)
}

// Accesses under a common lock are not reported (lockset), whatever their
// order; one unlocked write against them is.
func TestLocksetProtects(t *testing.T) {
	b := newBench(t, "")
	t1 := b.create(0, 0x500)
	t2 := b.create(0, 0x510)
	t3 := b.create(0, 0x520)
	b.flush(t1, lock(mu, 0), wr(x, 4, 0x1001), unlock(mu, 0))
	b.flush(t2, lock(mu, 0), wr(x, 4, 0x2002), rd(x, 4, 0x2003), unlock(mu, 0))
	b.flush(t1, lock(mu, 0), wr(x, 4, 0x1001), unlock(mu, 0))
	if races, out := b.d.rep.races, b.host.output(); races != 0 {
		t.Fatalf("locked accesses reported:\n%s", out)
	}
	b.flush(t3, wr(x, 4, 0x3003))
	races, out := b.finish()
	wantReports(t, races, out, 1,
		"  Write of size 4 at 0x10000 by thread T3:\n",
		"  Locks held by T3: none\n")
}

// The locks held at the racing access are listed: write-mode locks for a
// write (a read lock does not guard writes).
func TestLocksHeldListed(t *testing.T) {
	b := newBench(t, "")
	t1 := b.create(0, 0x500)
	t2 := b.create(0, 0x510)
	b.flush(t1, lock(mu, 0), wr(x, 4, 0x1001), unlock(mu, 0))
	b.flush(t2, lock(mu, 0), wr(x, 4, 0x2001), unlock(mu, 0))
	// x is Shared-Modified with C_d = {mu}; t2's write under mu+8 alone
	// follows its own write (the latest, TS_d) and makes x t2's again
	b.flush(t2, lock(mu+8, 0), wr(x, 4, 0x2002), unlock(mu+8, 0))
	// t1 under mu (and mu+16 for reading only) races with it
	b.flush(t1, lock(mu+16, abi.LockRead), lock(mu, 0), wr(x, 4, 0x1003), unlock(mu, 0), unlock(mu+16, 0))
	races, out := b.finish()
	wantReports(t, races, out, 1,
		"  Write of size 4 at 0x10000 by thread T1:\n",
		"  Previous write of size 4 by thread T2:\n",
		"  Locks held by T1: 0x20000\n")

	b = newBench(t, "")
	t1 = b.create(0, 0x500)
	t2 = b.create(0, 0x510)
	b.flush(t1, wr(x, 4, 0x1001))
	b.flush(t2, lock(mu, abi.LockRead), wr(x, 4, 0x2002), unlock(mu, 0))
	races, out = b.finish()
	wantReports(t, races, out, 1, "  Locks held by T2: none\n")
}

// A recursive lock stays in the lockset until its last unlock.
func TestRecursiveLock(t *testing.T) {
	b := newBench(t, "")
	t1 := b.create(0, 0x500)
	t2 := b.create(0, 0x510)
	b.flush(t1, lock(mu, 0), wr(x, 4, 0x1001), unlock(mu, 0))
	b.flush(t2, lock(mu, 0), wr(x, 4, 0x2002), unlock(mu, 0))
	b.flush(t1, lock(mu, 0), lock(mu, 0), unlock(mu, 0), wr(x, 4, 0x1003), unlock(mu, 0))
	races, out := b.finish()
	wantReports(t, races, out, 0)
}

// lib=no: locks are ignored, so locked accesses race.
func TestLibNoIgnoresLocks(t *testing.T) {
	b := newBench(t, "lib=no")
	t1 := b.create(0, 0x500)
	t2 := b.create(0, 0x510)
	b.flush(t1, lock(mu, 0), wr(x, 4, 0x1001), unlock(mu, 0))
	b.flush(t2, lock(mu, 0), wr(x, 4, 0x2002), unlock(mu, 0))
	races, out := b.finish()
	wantReports(t, races, out, 1)
}

// A report always pairs the access with another thread's conflicting one:
// a thread whose own unlocked read empties a location's lockset, while the
// other threads only read it under the lock, is not reported (a single
// writer, the others readers), and a read never pairs with a read.
func TestReportNeedsConflictingPartner(t *testing.T) {
	b := newBench(t, "")
	w, r := b.create(0, 0x500), b.create(0, 0x510)
	b.flush(w, lock(mu, 0), wr(x, 4, 0x1001), unlock(mu, 0))
	b.flush(r, lock(mu, 0), rd(x, 4, 0x2001), unlock(mu, 0))
	b.flush(w, rd(x, 4, 0x1002), lock(mu, 0), wr(x, 4, 0x1003), unlock(mu, 0), rd(x, 4, 0x1004))
	races, out := b.finish()
	wantReports(t, races, out, 0)
	b = newBench(t, "")
	w, r = b.create(0, 0x500), b.create(0, 0x510)
	b.flush(w, rd(x, 4, 0x1001))
	b.flush(r, rd(x, 4, 0x2001))
	b.flush(w, rd(x, 4, 0x1002))
	races, out = b.finish()
	wantReports(t, races, out, 0)
}

// A single writer that reads its variable without the lock and updates it
// under the lock, while readers read it under the lock (lbzip2's tail
// offset, mksquashfs's queue sequence): the lockset state empties, but no
// two accesses of different threads without a common lock conflict, so
// nothing is reported. An unlocked read by a reader is reported.
func TestSingleWriterUnderLock(t *testing.T) {
	trace := func(b *bench, w, r int32) {
		b.flush(w, lock(mu, 0), wr(x, 8, 0x1001), unlock(mu, 0))
		b.flush(r, lock(mu, 0), rd(x, 8, 0x2001), unlock(mu, 0))
		b.flush(w, rd(x, 8, 0x1002), lock(mu, 0), wr(x, 8, 0x1003), unlock(mu, 0))
		b.flush(r, lock(mu, 0), rd(x, 8, 0x2002), unlock(mu, 0))
	}
	b := newBench(t, "")
	w, r := b.create(0, 0x500), b.create(0, 0x510)
	trace(b, w, r)
	races, out := b.finish()
	wantReports(t, races, out, 0)

	b = newBench(t, "")
	w, r = b.create(0, 0x500), b.create(0, 0x510)
	trace(b, w, r)
	b.flush(w, lock(mu, 0), wr(x, 8, 0x1004), unlock(mu, 0))
	b.flush(r, rd(x, 8, 0x2003))
	races, out = b.finish()
	wantReports(t, races, out, 1, "Read of size 8 at 0x10000 by thread T2:\n", "Previous write of size 8 by thread T1:\n")
}

// Two bytes written together by one store and then used separately by two
// threads (mksquashfs's inode flags): the granule is one location for the
// state machine, but the report needs a partner that touched the same
// bytes, and there is none.
func TestNeighbourBytesWrittenTogether(t *testing.T) {
	b := newBench(t, "")
	b.flush(0, wr(x+2, 2, 0x101))
	c := b.create(0, 0x500)
	b.flush(0, rd(x+3, 1, 0x102))
	b.flush(c, wr(x+2, 1, 0x1001))
	races, out := b.finish()
	wantReports(t, races, out, 0)

	b = newBench(t, "")
	b.flush(0, wr(x+2, 2, 0x101))
	c = b.create(0, 0x500)
	b.flush(0, rd(x+2, 1, 0x102))
	b.flush(c, wr(x+2, 1, 0x1001))
	races, out = b.finish()
	wantReports(t, races, out, 1, "Write of size 1 at 0x10002 by thread T1:\n", "Previous read of size 1 by thread T0:\n")
}

// Two parallel accesses that no common lock guards are reported whichever
// the detector processes first: the exclusive states keep the owner's
// lockset (msm, choice 13). Before it, the second order of each pair
// entered Shared-Modified with the second thread's locks and was missed.
func TestOrderIndependent(t *testing.T) {
	type access struct {
		write bool
		lock  uint64 // 0: none
		pc    uint32
	}
	events := func(a access) []Event {
		ev := rd(x, 4, a.pc)
		if a.write {
			ev = wr(x, 4, a.pc)
		}
		if a.lock == 0 {
			return []Event{ev}
		}
		return []Event{lock(a.lock, 0), ev, unlock(a.lock, 0)}
	}
	for _, c := range []struct {
		name string
		a, b access
	}{
		{"unlocked read, locked write", access{false, 0, 0x1001}, access{true, mu, 0x2001}},
		{"two mutexes", access{true, mu, 0x1001}, access{true, mu + 8, 0x2001}},
		{"unlocked write, locked write", access{true, 0, 0x1001}, access{true, mu, 0x2001}},
	} {
		for _, swap := range []bool{false, true} {
			b := newBench(t, "")
			t1, t2 := b.create(0, 0x500), b.create(0, 0x510)
			first, second := t1, t2
			fa, sa := c.a, c.b
			if swap {
				first, second, fa, sa = t2, t1, c.b, c.a
			}
			b.flush(first, events(fa)...)
			b.flush(second, events(sa)...)
			races, out := b.finish()
			if races != 1 || !strings.Contains(out, "Previous ") {
				t.Errorf("%s (swapped %v): %d races, want 1:\n%s", c.name, swap, races, out)
			}
		}
	}
}

// The owner's lockset covers its current segment only: an unlocked
// initialisation before the threads are created does not count against
// the locked updates made after it.
func TestOwnerLocksetPerSegment(t *testing.T) {
	b := newBench(t, "")
	b.flush(0, wr(x, 4, 0x101))
	w := b.create(0, 0x500)
	b.flush(0, lock(mu, 0), rd(x, 4, 0x102), wr(x, 4, 0x103), unlock(mu, 0))
	b.flush(w, lock(mu, 0), rd(x, 4, 0x1001), wr(x, 4, 0x1002), unlock(mu, 0))
	races, out := b.finish()
	wantReports(t, races, out, 0)
}

// A write, a read ordered after it by another thread (which takes the
// location over), and a third thread's read ordered after neither: the
// third read races with the write whether or not the second read was
// processed first (dissertation fig. 6.3, W2's read of DATA_X).
func TestPastOwner(t *testing.T) {
	for _, between := range []bool{false, true} {
		b := newBench(t, "")
		s, w1, w2 := b.create(0, 0x500), b.create(0, 0x510), b.create(0, 0x520)
		b.flush(s, wr(x, 4, 0x1001))
		b.d.Release(s, mu)
		if between {
			b.d.Acquire(w1, mu)
			b.flush(w1, rd(x, 4, 0x2001))
			b.flush(w2, rd(x, 4, 0x3001))
		} else {
			b.flush(w2, rd(x, 4, 0x3001))
			b.d.Acquire(w1, mu)
			b.flush(w1, rd(x, 4, 0x2001))
		}
		races, out := b.finish()
		wantReports(t, races, out, 1, "Read of size 4 at 0x10000 by thread T3:\n", "Previous write of size 4 by thread T1:\n    #0 0x1001")
	}
}

// A read followed in the same batch by a write that covers it (x += v) is
// checked as that write (writtenNext), so that another thread's read
// processed between the two cannot put the location in Shared-Read and let
// the write pass. (The bench processes one batch at a time, so the
// interleaving itself is not replayed here; mutex_unlocked_read at -O0
// hit it about once in 100 runs.)
func TestReadThenWriteChecked(t *testing.T) {
	b := newBench(t, "")
	dep, aud := b.create(0, 0x500), b.create(0, 0x510)
	b.flush(dep, lock(mu, 0), rd(x, 4, 0x1001), wr(x, 4, 0x1002), unlock(mu, 0))
	b.flush(aud, rd(x, 4, 0x2001))
	races, out := b.finish()
	wantReports(t, races, out, 1, "Read of size 4 at 0x10000 by thread T2:\n", "Previous write of size 4 by thread T1:\n")

	// a lock event between them ends the look-ahead
	if writtenNext([]Event{unlock(mu, 0), wr(x, 4, 0x1002)}, x, 4) || !writtenNext([]Event{rd(flag, 4, 1), wr(x, 8, 2)}, x+4, 4) {
		t.Error("writtenNext: wrong look-ahead")
	}
}

// A race on one byte of a granule does not end the checks of its other
// bytes: a one-byte flag and its neighbour, both written by one thread,
// then read and written by another without synchronisation.
func TestRaceOnOneByteKeepsNeighbour(t *testing.T) {
	b := newBench(t, "")
	w := b.create(0, 0x500)
	b.flush(w, wr(x, 1, 0x1001), wr(x+1, 1, 0x1002))
	b.flush(0, rd(x, 1, 0x101))
	b.flush(0, wr(x+1, 1, 0x102))
	races, out := b.finish()
	wantReports(t, races, out, 2, "Read of size 1 at 0x10000 by thread T0:\n", "Write of size 1 at 0x10001 by thread T0:\n")
}

// The past owner's clock belongs to the access it was taken for: when the
// history's two entries are the same access word (a thread reading at
// the same instruction in a new segment), the entry that moves on a change
// of owner gets the previous owner's clock, not a clock a still older
// owner left in the cell. (A refcounted message queue at -O0 was reported
// twice on every run.)
func TestPastOwnerClockFollowsAccess(t *testing.T) {
	b := newBench(t, "")
	t1 := b.create(0, 0x500)
	for i := 0; i < 20; i++ {
		b.d.Release(0, cv) // the main thread's clock runs well ahead
	}
	b.flush(0, wr(x, 4, 0x101))
	b.d.Release(0, mu)
	b.d.Acquire(t1, mu)
	b.flush(t1, rd(x, 4, 0x1001))
	b.flush(t1, wr(x, 4, 0x1002)) // another batch: not checked as one access with the read
	b.d.Release(t1, mu)
	b.flush(t1, rd(x, 4, 0x1001)) // a new segment, the same access word as before
	b.d.Release(t1, mu)
	b.d.Acquire(0, mu)
	b.flush(0, rd(x, 4, 0x102), wr(x, 4, 0x103))
	races, out := b.finish()
	wantReports(t, races, out, 0)
}

// The last, partial granule of a long access is remembered with the bytes
// the access covered there: a copy that stops in the middle of a granule
// does not race with another thread's write of the bytes after it (zstd's
// worker writes a block header right after the data the main thread
// copies out).
func TestPartialGranuleOfRange(t *testing.T) {
	b := newBench(t, "")
	w := b.create(0, 0x500)
	b.flush(w, wr(x, 8, 0x1001)) // the worker wrote the whole word earlier
	b.d.Release(w, mu)
	b.d.Acquire(0, mu)
	b.flush(0, Event{Addr: x - 64, Info: abi.Info(0x101, 1, abi.Read), Len: 64 + 6}) // copies up to x+6
	b.flush(w, wr(x+6, 2, 0x1002))                                                   // the next bytes, unordered
	races, out := b.finish()
	wantReports(t, races, out, 0)
}

// A three-byte range within one granule is remembered as those three
// bytes (GNU sort compares a line's bytes up to its terminator, which
// another thread writes).
func TestThreeByteRange(t *testing.T) {
	b := newBench(t, "")
	w := b.create(0, 0x500)
	b.flush(w, wr(x, 4, 0x1001))
	b.d.Release(w, mu)
	b.d.Acquire(0, mu)
	b.flush(0, Event{Addr: x, Info: abi.Info(0x101, 1, abi.Read), Len: 3})
	b.flush(w, wr(x+3, 1, 0x1002))
	races, out := b.finish()
	wantReports(t, races, out, 0)
}

// Two 4-byte variables share an 8-byte granule, and one thread uses both
// (a flag beside the value it guards): the granule is one location until
// another thread comes. Its read of the second variable, the granule's
// bytes that its latest access did not cover, stays in the history, so
// that when a race on the first splits the granule, the other thread's
// write to the second still has a partner (dissertation fig. 5.5 under
// lib=no: COND beside GLOB).
func TestNeighbourVariablesOfOneThread(t *testing.T) {
	const cond, glob = 0x10400, 0x10404
	b := newBench(t, "")
	w := b.create(0, 0x500)
	b.flush(0, wr(glob, 4, 0x1001), rd(glob, 4, 0x1002), rd(cond, 4, 0x1003))
	b.flush(w, rd(glob, 4, 0x2001), Event{Addr: cond, Info: abi.Info(0x2002, 4, abi.Read|abi.Write)})
	b.flush(0, rd(cond, 4, 0x1004))
	races, out := b.finish()
	wantReports(t, races, out, 2,
		"  Read of size 4 at 0x10404 by thread T1:\n", "  Previous write of size 4 by thread T0:\n",
		"  Read-write of size 4 at 0x10400 by thread T1:\n", "  Previous read of size 4 by thread T0:\n")
}

// Per-thread slots: main writes two neighbouring ints of one granule, then
// each of two threads uses its own. The granule splits, and the second
// slot changes owner although the granule's last owner was the first
// thread (which never used that slot): no report, and a later write of
// the first thread to the second slot races with the second thread's.
func TestNeighbourSlotsChangeOwner(t *testing.T) {
	b := newBench(t, "")
	b.flush(0, wr(x, 4, 0x100), wr(x+4, 4, 0x101))
	t1, t2 := b.create(0, 0x500), b.create(0, 0x510)
	b.flush(t1, wr(x, 4, 0x1001))
	b.flush(t2, wr(x+4, 4, 0x2001))
	b.flush(t1, wr(x, 4, 0x1002))
	b.flush(t2, wr(x+4, 4, 0x2002))
	b.flush(t1, wr(x+4, 4, 0x1003))
	races, out := b.finish()
	wantReports(t, races, out, 1, "  Write of size 4 at 0x10004 by thread T1:\n", "  Previous write of size 4 by thread T2:\n")
}

// A race against the exclusive owner's latest access waits for the owner's
// fast path to finish its stores (historyLags), but only before a report
// that would print: a buffer whose every granule races with the same pair
// of instructions (xz -T2's worker copying a block) waits once, not once
// per granule, which took minutes. (The waits are counted: a bound on the
// time, 25 ms, was met by the work alone, 12-16 ms under -race, on a
// loaded machine.)
func TestRacingBufferWaitsOnce(t *testing.T) {
	b := newBench(t, "")
	t1 := b.create(0, 0x500)
	t2 := b.create(0, 0x510)
	const granules = 2048
	var writes, reads []Event
	for g := uint64(0); g < granules; g++ {
		writes = append(writes, wr(x+8*g, 8, 0x1001))
		reads = append(reads, rd(x+8*g, 8, 0x2002))
	}
	b.flush(t1, writes...)
	b.flush(t2, reads...)
	if n := b.d.historyWaited.Load(); n != 1 {
		t.Errorf("reading %d racing granules waited for the owner's history %d times, want once", granules, n)
	}
	races, out := b.finish()
	wantReports(t, races, out, 1,
		"  Read of size 8 at 0x10000 by thread T2:\n    #0 0x2002 (program+0x2002)\n",
		"  Previous write of size 8 by thread T1:\n    #0 0x1001 (program+0x1001)\n")
}

// Two ints written by one store and then used one by each thread: the
// producer (T0) fills both, then creates the consumer, which writes the
// first (a take-over of the granule) and reads the second in the same
// segment; the producer's later write of the second races with that read
// (remembered). Before, the read changed nothing (Exclusive-Write in the
// consumer's segment, every byte touched) and stayed out of the history,
// whose accesses were the consumer's write of the first int and the
// producer's own store: the race had no partner, in every schedule.
func TestOtherFieldReadAfterTakeOver(t *testing.T) {
	b := newBench(t, "")
	b.flush(0, wr(x, 8, 0x100))
	c := b.create(0, 0x500)
	b.flush(c, wr(x, 4, 0x1001), rd(x+4, 4, 0x1002))
	b.flush(0, wr(x+4, 4, 0x101))
	races, out := b.finish()
	wantReports(t, races, out, 1, "  Write of size 4 at 0x10004 by thread T0:\n", "  Previous read of size 4 by thread T1:\n")
}

// manyLocksets makes thread tid intern more locksets than an access word
// can name (shadow.AccessLocksUnknown): base with each of 600 other locks.
func manyLocksets(b *bench, tid int32, base uint64) {
	for i := uint64(1); i <= 600; i++ {
		b.flush(tid, lock(base, 0), lock(base+16*i, 0), unlock(base+16*i, 0), unlock(base, 0))
	}
}

// Two variables of one granule used by one thread under different locks
// leave it no common lock; another thread's access to the first, under
// the first's lock, has a state-machine race but no partner it is proved
// to conflict with: the first's access held a lockset too large for its
// history word, which may share the lock (memcached: sizes[i] under
// lru_locks[i], its neighbour under another, and the maintainer thread's
// accesses under three locks: 18 false reports a minute). Without a lock,
// the same access is paired with it.
func TestUnknownLocksetNotPaired(t *testing.T) {
	for _, locked := range []bool{true, false} {
		b := newBench(t, "")
		t1 := b.create(0, 0x500)
		t2 := b.create(0, 0x510)
		manyLocksets(b, t1, mu+0x1000)
		b.flush(t1, lock(mu+0x1000, 0), lock(mu, 0), wr(x, 4, 0x1001), unlock(mu, 0), unlock(mu+0x1000, 0))
		b.flush(t1, lock(mu+8, 0), wr(x+4, 4, 0x1002), unlock(mu+8, 0))
		if locked {
			b.flush(t2, lock(mu, 0), wr(x, 4, 0x2001), unlock(mu, 0))
			races, out := b.finish()
			wantReports(t, races, out, 0)
			continue
		}
		b.flush(t2, wr(x, 4, 0x2001))
		races, out := b.finish()
		wantReports(t, races, out, 1, "  Write of size 4 at 0x10000 by thread T2:\n", "  Previous write of size 4 by thread T1:\n    #0 0x1001")
	}
}
