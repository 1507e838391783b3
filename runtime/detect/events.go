package detect

import "hgrewrite/abi"

// Flush processes a batch of thread tid's events, in order; rec is the
// thread's region recording (read by condition-variable events). It returns
// the number of the thread's reports waiting for its call stack (Stack),
// and of its acquisitions that wait for it to enter the lock-order graph
// (lockorder.go).
func (d *Detector) Flush(tid int32, events []Event, rec Region) int {
	t := d.live(tid)
	if t == nil {
		return 0
	}
	if t.rec == nil && rec != nil {
		// what t's clock took in before (its parent's, a join made
		// outside a flush) is news to the fast path
		rec.KnowJoin(t.vc.Get(uint16(t.tid)))
	}
	t.rec, t.tsetGen = rec, d.tsets.Generation()
	t.materialize(false)
	for i, e := range events {
		d.event(t, e, events[i+1:])
	}
	return d.rep.pendingCount(t) + len(t.orderPending)
}

// event dispatches one event on its info word's flags; rest are the
// events that follow it in the batch.
func (d *Detector) event(t *thread, e Event, rest []Event) {
	pc, size, flags := abi.SplitInfo(e.Info)
	t.accessSP = 0 // known for plain accesses only (below)
	switch {
	case flags&(abi.Lock|abi.Unlock) != 0:
		if d.opts.Lib {
			d.lockEvent(t, e.Addr, e.Len, flags&abi.Lock != 0)
		}
	case flags&(abi.Hook|abi.Signal|abi.WaitDone) != 0:
		if d.opts.Lib {
			d.condEvent(t, e.Addr, e.Len, flags)
		}
	case flags&(abi.Alloc|abi.Free) != 0:
		d.heapEvent(t, e.Addr, e.Len, uint64(pc), flags)
	case flags&abi.Atomic != 0:
		d.atomicEvent(t, e.Addr, uint64(size), flags, e.Len)
	default:
		n, sp := eventSP(e.Len)
		if n == 0 {
			n = uint64(size)
		}
		t.accessSP = sp
		if flags&abi.Read != 0 && t.cond.recording {
			d.handoffRead(t, e.Addr)
		}
		if flags&abi.Write != 0 && t.cond.recording {
			d.handoffWrite(t, e.Addr, n)
		}
		if flags&abi.Write == 0 && writtenNext(rest, e.Addr, n) && !d.touchesSync(e.Addr, n) {
			return
		}
		d.access(t, e.Addr, n, pc, uint8(flags))
	}
}

// writtenLookahead bounds the events writtenNext looks at.
const writtenLookahead = 16

// writtenNext reports whether a read of [addr, addr+n) is followed, in
// the same segment and under the same locks, by a write that covers it:
// the next events up to the first that is not a plain access. Such a read
// (the load of x += v, or of any read-modify-write the compiler did not
// fuse) needs no check of its own: everything it conflicts with, the
// write conflicts with too. Checking the two as one access also keeps
// another thread's access from being processed between them, which would
// put the location in Shared-Read on the read and let the write pass
// unchecked against that thread (MSM-short compares a write in
// Shared-Read with one reader's segment only).
func writtenNext(rest []Event, addr, n uint64) bool {
	for i := 0; i < len(rest) && i < writtenLookahead; i++ {
		_, size, flags := abi.SplitInfo(rest[i].Info)
		if flags&^(abi.Read|abi.Write) != 0 {
			return false // a synchronisation, heap, hook or atomic event
		}
		m, _ := eventSP(rest[i].Len)
		if m == 0 {
			m = uint64(size)
		}
		if flags&abi.Write != 0 && rest[i].Addr <= addr && addr+n <= rest[i].Addr+m {
			return true
		}
	}
	return false
}

// lockEvent changes t's locksets and begins or ends its lock-protected
// region; mode holds the abi.Lock* bits.
func (d *Detector) lockEvent(t *thread, addr, mode uint64, lock bool) {
	// a lock held in read mode only orders nothing its holders write
	if !lock && mode&abi.LockDestroy != 0 {
		d.mutexGone(addr, 1)
		return
	}
	exclusive := !lock && d.locks.Contains(t.writeHeld, addr)
	if lock && mode&(abi.LockWritesFull|abi.LockReadsFull) != 0 {
		d.publishSoFar(t, mode)
	}
	if lock {
		d.lockOrderNote(t, addr, mode)
		d.lock(t, addr, mode&abi.LockRead == 0)
	} else {
		d.unlock(t, addr)
	}
	switch {
	case lock && mode&abi.LockBegin != 0:
		t.cond.begin()
		t.regionMutex, t.regionRead = addr, mode&abi.LockRead != 0
	case !lock && mode&abi.LockNested != 0,
		!lock && mode&abi.LockWait != 0 && mode&abi.LockRecord != 0:
		d.publishSince(t, addr, exclusive, int(mode>>abi.LockMarkShift))
	case !lock && mode&abi.LockEnd != 0:
		if mode&abi.LockWaitedC != 0 && !t.cond.waited {
			// the C side settled a wait-loop exit (runtime/fastpath.c,
			// hg_loop_exit_c): the reads after it are searched here
			t.cond.waited, t.cond.joined = true, int(mode>>abi.LockMarkShift)
		}
		d.regionEnd(t, addr, exclusive, mode&abi.LockCVM != 0, mode&abi.LockRecord != 0)
		if mode&abi.LockTicked != 0 {
			// the C side published the region and began t's next
			// segment (runtime/regionpub.c): the clock follows, the epoch
			// is published already
			t.vc.Tick(uint16(t.tid))
		}
	}
}

// condEvent handles a wait-loop hook, a signal or a completed wait.
func (d *Detector) condEvent(t *thread, addr, arg uint64, flags uint16) {
	switch {
	case flags&abi.Hook != 0:
		d.loopExit(t, addr)
	case flags&abi.Signal != 0:
		d.signal(t, addr, arg&abi.SignalAtEnd != 0)
	default:
		d.waitDone(t, addr, arg&abi.WaitInLoop != 0, arg&abi.WaitWoke != 0)
	}
}

// atomicEvent: atomics are synchronisation, never races. Before the
// instruction, release onto the address; after it (abi.Post), acquire what
// was released there.
//
// The location of a locked instruction (lock prefix, xchg) becomes a
// synchronisation variable (msm.Spin): plain moves
// to and from it, which is how x86 compiles atomic loads and release
// stores, are acquires and releases too, and never races (syncAccess).
// libstdc++'s futures, for one, publish their state with an exchange and
// test it with a plain load.
//
// An acquire the C side found to bring nothing new (abi.AcquireKnown:
// no release on the word since t's last acquire of it), and a release it
// made itself (abi.ReleaseKnown, syncClocks), began t's next segment
// there; t's clock follows. So it does a component the C side raised at
// an acquire (abi.ClockRaise), which comes before the acquire's tick.
func (d *Detector) atomicEvent(t *thread, addr, size uint64, flags uint16, arg uint64) {
	if arg == abi.ClockRaise {
		t.raise(uint16(addr>>48), addr&(1<<48-1)) // a join the C side made (hg_take_in)
	} else if arg&(abi.AcquireKnown|abi.ReleaseKnown) != 0 {
		for range 1 + arg>>abi.TicksShift { // the epoch is published already
			t.vc.Tick(uint16(t.tid))
		}
	} else if flags&abi.Post != 0 {
		d.acquire(t, addr)
	} else if flags&abi.Spin == 0 { // a locked instruction, not a spin load or a store that may be one's counterpart
		d.markSync(addr, size)
		d.syncVC.exchange(t, addr)
		d.tick(t)
	} else {
		d.release(t, addr)
	}
}
