package detect

import (
	"fmt"

	"hgrewrite/abi"
	"hgrewrite/shadow"
)

// ThreadCreate registers a thread created by parent and returns its id,
// or -1 when it cannot be checked (unknown parent, or abi.MaxThreads
// reached: a message says so once). stack is the creator's call stack in
// the pthread_create wrapper: run-time return addresses, innermost first,
// the runtime library's own frames included or not (they are dropped
// here); a forked child's creator passes the wrapper's return address
// alone. The child starts from the parent's clock; the parent starts a
// new segment.
func (d *Detector) ThreadCreate(parent int32, stack []uint64) int32 {
	p := d.thread(parent)
	if p == nil {
		return -1
	}
	stack = d.programFrames(stack)
	c := d.newThread(p, creation{pc: d.callPC(stack), stack: stack})
	if c == nil {
		d.tooManyThreads.Do(func() {
			d.host.Print(fmt.Sprintf("hgrewrite: more than %d threads: threads created from now on are not checked\n", abi.MaxThreads))
		})
		return -1
	}
	d.tick(p)
	return c.tid
}

// creation is where a thread was created: what reports say of it.
type creation struct {
	// pc is the main program's link-time address inside the
	// pthread_create call (its return address minus 1, which
	// symbolises to the call's line), 0 when the call was made
	// elsewhere (a library's, such as libstdc++'s std::thread).
	pc uint64
	// stack is the creator's call stack: run-time return addresses,
	// innermost first, without the runtime library's frames; frames
	// are rendered at ra-1 (reporter.frames). Not modified after the
	// thread is registered.
	stack []uint64
}

// programFrames drops the runtime library's frames from a captured
// stack: those above the program's (the wrapper itself), and everything
// from the next one down (the runtime's own threads start below the
// program), as reporter.frames does. The result is a copy.
func (d *Detector) programFrames(stack []uint64) []uint64 {
	for len(stack) > 0 && d.host.InRuntime(stack[0]) {
		stack = stack[1:]
	}
	for i, ra := range stack {
		if d.host.InRuntime(ra) {
			stack = stack[:i]
			break
		}
	}
	return append([]uint64(nil), stack...)
}

// callPC is the link-time address inside the call whose return address
// is stack[0] (ra-1: the call's line, not the next one's), 0 when it is
// not in the main program.
func (d *Detector) callPC(stack []uint64) uint64 {
	if len(stack) == 0 {
		return 0
	}
	if lp := d.host.LinkPC(stack[0]); lp != 0 {
		return lp - 1
	}
	return 0
}

// ThreadHandle records the pthread_t of thread tid: ThreadJoin finds the
// thread by it, and ThreadName when a thread names another. The C side
// calls it for every thread it registers, once the handle is known: a
// thread created detached (ThreadDetach with its id first) and the main
// thread are recorded for naming only (no ThreadJoin may name the first;
// joining the main thread is not modelled).
func (d *Detector) ThreadHandle(tid int32, handle uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if tid < 0 || int(tid) >= len(d.threads) {
		return
	}
	d.named[handle] = tid
	if t := d.threads[tid]; !t.detached && t.parent >= 0 {
		d.handles[handle] = tid
	}
}

// ThreadName records the name thread tid was given (pthread_setname_np,
// prctl PR_SET_NAME), for reports; "" forgets it. The name is written and
// read (threadName) under d.mu: a thread may name another, and the
// reporter reads it on any thread.
func (d *Detector) ThreadName(tid int32, name string) {
	d.mu.Lock()
	if tid >= 0 && int(tid) < len(d.threads) {
		d.threads[tid].name = name
	}
	d.mu.Unlock()
}

// HandleThread is the id of the live thread whose pthread_t is handle
// (ThreadHandle), -1 if there is none: a thread naming another.
func (d *Detector) HandleThread(handle uint64) int32 {
	d.mu.Lock()
	defer d.mu.Unlock()
	if tid, ok := d.named[handle]; ok {
		return tid
	}
	return -1
}

// threadName is the name thread tid was given last, "" if none.
func (d *Detector) threadName(tid int32) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if tid < 0 || int(tid) >= len(d.threads) {
		return ""
	}
	return d.threads[tid].name
}

// ThreadExit records thread tid's final clock, which its joiner acquires.
// It is the clock itself, not a copy: no event of the thread follows its
// exit (the C side retires its record), and a copy as long as the number
// of threads ever created, per thread, is what made thread churn cost
// time in the garbage collector.
func (d *Detector) ThreadExit(tid int32) {
	if t := d.thread(tid); t != nil {
		t.materialize(true) // the id may go to another thread, whose snapshot ring is the id's
		t.dropSnapshot()
		d.mu.Lock()
		t.exitVC = t.vc
		d.releaseDetachedLocked(t)
		d.mu.Unlock()
	}
}

// ThreadDetach: a thread will never be joined: the one with pthread_t
// handle (pthread_detach), or thread tid when tid >= 0 (created detached:
// its creator knows the id, while the handle may already name another
// thread once a detached thread has exited). Its id goes to the detached
// quarantine when it has exited (reuseLocked).
func (d *Detector) ThreadDetach(tid int32, handle uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	child, ok := tid, tid >= 0
	if !ok {
		child, ok = d.handles[handle]
		delete(d.handles, handle)
	}
	if !ok || int(child) >= len(d.threads) {
		return
	}
	c := d.threads[child]
	c.detached = true
	d.releaseDetachedLocked(c)
}

// releaseDetachedLocked queues the id of t once t is both detached and
// exited, and drops its clocks: nobody will join it.
func (d *Detector) releaseDetachedLocked(t *thread) {
	if !t.detached || t.exitVC == nil || t.released {
		return
	}
	t.released = true
	d.detached = append(d.detached, freedTID{t.tid, t.exitVC.Get(uint16(t.tid))})
	t.forget()
}

// ThreadJoin: thread tid joined the thread with pthread_t handle
// (pthread_join). The joiner acquires the joined thread's final clock, and
// the joined thread leaves every threadset.
func (d *Detector) ThreadJoin(tid int32, handle uint64) {
	t := d.thread(tid)
	child, final, ok := d.joinClock(t, handle)
	if ok {
		// Join rule (ch. 5.1.2), applied lazily: cells whose threadset
		// loses its last other member return to exclusive when next
		// touched (Detector.afterJoin). The id may be reused from now
		// on: no threadset built for the joined thread is read as
		// containing a new one.
		d.killThreadsets(child)
		d.mu.Lock()
		d.threads[child].released = true
		d.freed = append(d.freed, freedTID{child, final})
		d.mu.Unlock()
	}
	if t != nil {
		d.tick(t)
	}
}

// joinClock forgets handle and joins its thread's final clock (its current
// one if it has not recorded its exit) into t's, if t is known. It
// returns the joined thread's id and the last clock value of its own.
func (d *Detector) joinClock(t *thread, handle uint64) (int32, uint64, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	child, ok := d.handles[handle]
	delete(d.handles, handle)
	if !ok || int(child) >= len(d.threads) {
		return child, 0, false
	}
	if d.named[handle] == child {
		delete(d.named, handle) // the handle may name a new thread from now on
	}
	c := d.threads[child]
	vc := c.exitVC
	if vc == nil {
		vc = c.vc
	}
	final := vc.Get(uint16(child))
	if t != nil {
		t.join(vc)
	}
	c.forget()
	return child, final, true
}

// freedTID is the id of a joined thread and the last clock value of its
// own, which a new thread under that id starts above.
type freedTID struct {
	tid   int32
	final uint64
}

// pastThread is what reports say of an earlier thread under a reused id.
type pastThread struct {
	parent      int32
	createPC    uint64   // as thread.createPC
	createStack []uint64 // as thread.createStack
	name        string   // the name it had last (thread.name)
}

// pastMax is how many earlier threads per id reports can name.
const pastMax = 3

// pastOf lists the earlier threads of old's id for its successor: old
// first, then old's own list, at most pastMax. The caller holds d.mu
// (old.name).
func pastOf(old *thread) []pastThread {
	past := append([]pastThread{{old.parent, old.createPC, old.createStack, old.name}}, old.past...)
	return past[:min(len(past), pastMax)]
}

// reuseMaxScan bounds the look for a reusable id per thread creation.
const reuseMaxScan = 64

// detachQuarantine is how many exited detached threads keep their ids
// before the oldest id is reused.
const detachQuarantine = 64

// reuseLocked picks the id of a joined thread for a thread that parent
// creates, as ThreadSanitizer recycles its thread slots: vector clocks,
// and the time to copy them at every creation, then stay as long as the
// number of threads alive at once, not the number that ever lived.
//
// The rule (shadow.Threads states it too): the id u of a joined thread
// goes to a thread created by p only if all of u happens before the
// creation, that is p's clock has reached u's final clock (p joined u, or
// synchronised with a thread that did). The new thread's clock for u then
// starts above u's final value, so epochs of the two never collide, every
// access of u is ordered before the new thread, and other threads' view
// of u says nothing about it. Meeting an access of u as "its own" is the
// ownership transfer the state machines would make anyway. ThreadJoin
// retires u's threadsets before u is offered. The smallest ids are found
// first, which keeps clocks short.
//
// Detached threads are joined by nobody, so nothing orders their end
// before a creation. As ThreadSanitizer does, their ids are reused all the
// same, after a quarantine of detachQuarantine exited detached threads,
// oldest first, so that a thread-per-request server keeps clocks and ids
// bounded. The cost: the new thread meets the earlier one's accesses as
// its own, so a race between those two threads alone is missed; its clock
// still starts above the earlier thread's, so every other thread's view
// stays right. The threadsets of such an id are retired only now, when it
// is reused: the join rule does not apply to a thread nobody joined.
func (d *Detector) reuseLocked(p *thread) (int32, uint64, bool) {
	best := -1
	for i, f := range d.freed {
		if i == reuseMaxScan {
			break
		}
		if p.vc.Get(uint16(f.tid)) >= f.final && (best < 0 || f.tid < d.freed[best].tid) {
			best = i
		}
	}
	if best >= 0 {
		f := d.freed[best]
		d.freed = append(d.freed[:best], d.freed[best+1:]...)
		return f.tid, f.final, true
	}
	if len(d.detached) <= detachQuarantine {
		return 0, 0, false
	}
	f := d.detached[0]
	d.detached = d.detached[1:]
	d.killThreadsets(f.tid)
	return f.tid, f.final, true
}

// killThreadsets retires the threadsets holding thread tid (it has gone)
// and tells the fast path, whose threadsets known to hold a thread are
// stale from now on.
func (d *Detector) killThreadsets(tid int32) {
	d.tsets.Kill(uint16(tid))
	d.host.PublishThreadsetGen(d.tsets.Generation())
}

// forget drops the clocks of a thread that has been joined: nobody joins
// it again, and a program that creates threads by the thousand would
// otherwise keep one vector clock per thread that ever lived (each as long
// as the number of threads then), and its region records. No event comes
// from it any more (the C side retired its record at its exit); an empty
// clock stands in, which grows only if one did. What reports say of it
// (tid, parent, where it was created) stays.
func (t *thread) forget() {
	if t.exitVC == nil && t.det != nil && t.det.host.SnapshotsPushed(uint16(t.tid)) > 0 {
		// it ended without ThreadExit (cancelled): the C side may have
		// published for it, and its id may go to another thread now
		t.det.materializeAll(uint16(t.tid))
	}
	t.vc, t.exitVC, t.snap, t.clocks = new(shadow.VC), nil, nil, nil
	t.depth, t.cond, t.pending, t.rec = nil, condState{}, nil, nil
	t.npending.Store(0)
	t.overKnown = [len(t.overKnown)]uint64{}
}
