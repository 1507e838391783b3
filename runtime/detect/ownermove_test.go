package detect

import (
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"hgrewrite/abi"
	"hgrewrite/msm"
	"hgrewrite/shadow"
)

// A step that finds an owner's cell in the owner's new segment with the
// history of the old one waits while the owner's record names the cell
// (the owner's fast path between its compare-and-swap of word 0 and its
// store of the history), however long that takes, and steps again. Here
// the granule holds two variables: the history's access is T1's write of
// A, made before T1 created T2; the move is for T1's write of B. T2's read
// of A races with nothing. With a wait bounded by time (historyLags, 6.35
// ms), an owner kept off the processor longer let the false report
// through: cv_nested_wait_loops, now and then in a clean-clone make test.
func TestStepWaitsForOwnersMove(t *testing.T) {
	b := newBench(t, "")
	t1 := b.create(0, 0x500)
	b.flush(t1, wr(x, 4, 0x1001))
	t2 := b.create(t1, 0x510) // after T1's write of A
	b.host.mu.Lock()
	epoch := b.host.epochs[t1] // T1's segment after the creation
	b.host.mu.Unlock()

	c := b.d.mem.Cell(x)
	old := atomic.LoadUint64(&c[0])
	atomic.StoreUint64(&c[0], shadow.PackWord0(uint8(msm.ExclWrite), epoch, shadow.TouchedMask))
	var moving atomic.Uintptr
	moving.Store(uintptr(unsafe.Pointer(c)))
	b.host.mu.Lock()
	b.host.moving = func(tid int32) uintptr {
		if tid == t1 {
			return moving.Load()
		}
		return 0
	}
	b.host.mu.Unlock()
	const away = 30 * time.Millisecond // the owner off the processor, past historyLags' bound
	go func() {
		time.Sleep(away)
		// hg_history: the write of A goes to word 3, with its segment's
		// clock in word 1's upper half; word 2 takes the write of B
		atomic.StoreUint64(&c[1], atomic.LoadUint64(&c[1])&0xffffffff|(old&shadow.CellClockMask)<<32)
		atomic.StoreUint64(&c[3], atomic.LoadUint64(&c[2]))
		atomic.StoreUint64(&c[2], shadow.PackAccess(0x1002, uint16(t1), abi.Write, x+4, 4, 0))
		moving.Store(0)
	}()
	start := time.Now()
	b.flush(t2, rd(x, 4, 0x2001))
	if waited := time.Since(start); waited < away {
		t.Errorf("the step went on after %v, before the owner's move ended", waited)
	}
	if races, out := b.finish(); races != 0 {
		t.Fatalf("T2's read of A reported against T1's write of A made before T2 existed:\n%s", out)
	}
}

// A step that would report against an owner that is not moving the cell
// does not wait (a race's report used to wait 6.35 ms for the history).
func TestStepReportsWithoutWaitWhenOwnerIdle(t *testing.T) {
	b := newBench(t, "")
	b.host.moving = func(int32) uintptr { return 0 }
	t1 := b.create(0, 0x500)
	t2 := b.create(0, 0x510)
	b.flush(t1, wr(x, 4, 0x1001))
	start := time.Now()
	b.flush(t2, rd(x, 4, 0x2001))
	if waited := time.Since(start); waited >= historyWait<<(historyWaits-1) {
		t.Errorf("the report waited %v for an owner that was not moving the cell", waited)
	}
	if races, _ := b.finish(); races != 1 {
		t.Fatalf("%d reports, want 1", races)
	}
}

// A step of another thread during the owner's move must not take the
// cell's old owner lockset and history with its new state either, or it
// misses a race: T0 wrote x under mu, then reads it without a lock in a
// new segment; T1, created before either, reads and writes x under mu.
// Taken with the lockset {mu} the move has not replaced yet, T1's write
// finds mu common to both and reports nothing (msm_long_masked_fig5_3
// once in a clean-clone make test, where T1's increment and T0's read
// come at the same moment by the program's sleeps).
func TestStepDuringOwnersMoveFindsRace(t *testing.T) {
	b := newBench(t, "")
	t1 := b.create(0, 0x500)
	b.flush(0, lock(mu, 0), wr(x, 4, 0x1001), unlock(mu, 0))
	b.host.mu.Lock()
	epoch := b.host.epochs[0] // T0's segment after the unlock
	b.host.mu.Unlock()

	// T0's fast path moves the cell for its read of x without a lock:
	// word 0 is changed, the owner's lockset and the history are not yet
	c := b.d.mem.Cell(x)
	old := atomic.LoadUint64(&c[0])
	atomic.StoreUint64(&c[0], shadow.PackWord0(uint8(msm.ExclRead), epoch, old&shadow.TouchedMask))
	var moving atomic.Uintptr
	moving.Store(uintptr(unsafe.Pointer(c)))
	b.host.mu.Lock()
	b.host.moving = func(tid int32) uintptr {
		if tid == 0 {
			return moving.Load()
		}
		return 0
	}
	b.host.mu.Unlock()
	go func() {
		time.Sleep(30 * time.Millisecond)
		// hg_granule: the owner's lockset becomes the read's (none), the
		// write goes to word 3 with its segment's clock, word 2 takes the
		// read
		atomic.StoreUint64(&c[1], (old&shadow.CellClockMask)<<32)
		atomic.StoreUint64(&c[3], atomic.LoadUint64(&c[2]))
		atomic.StoreUint64(&c[2], shadow.PackAccess(0x1002, 0, abi.Read, x, 4, 0))
		moving.Store(0)
	}()
	b.flush(t1, lock(mu, 0), rd(x, 4, 0x2001), wr(x, 4, 0x2002), unlock(mu, 0))
	races, out := b.finish()
	wantReports(t, races, out, 1,
		"  Write of size 4 at 0x10000 by thread T1:\n    #0 0x2002 (program+0x2002)\n",
		"  Previous read of size 4 by thread T0:\n    #0 0x1002 (program+0x1002)\n")
}
