package detect

import (
	"fmt"

	"hgrewrite/abi"
	"hgrewrite/shadow"
)

// ThreadCreate registers a thread created by parent (pthread_create; ra is
// the call's run-time return address) and returns its id, or -1 when it
// cannot be checked (unknown parent, or abi.MaxThreads reached: a message
// says so once). The child starts from the parent's clock; the parent
// starts a new segment.
func (d *Detector) ThreadCreate(parent int32, ra uint64) int32 {
	p := d.thread(parent)
	if p == nil {
		return -1
	}
	d.mu.Lock()
	full := len(d.threads) >= abi.MaxThreads
	d.mu.Unlock()
	if full {
		d.tooManyThreads.Do(func() {
			d.host.Print(fmt.Sprintf("hgrewrite: more than %d threads: threads created from now on are not checked\n", abi.MaxThreads))
		})
		return -1
	}
	c := d.newThread(p, d.host.LinkPC(ra))
	d.tick(p)
	return c.tid
}

// ThreadHandle records the pthread_t of thread tid, for ThreadJoin.
func (d *Detector) ThreadHandle(tid int32, handle uint64) {
	d.mu.Lock()
	d.handles[handle] = tid
	d.mu.Unlock()
}

// ThreadExit records thread tid's final clock, which its joiner acquires.
// It is the clock itself, not a copy: no event of the thread follows its
// exit (the C side retires its record), and a copy as long as the number
// of threads ever created, per thread, is what made thread churn cost
// time in the garbage collector.
func (d *Detector) ThreadExit(tid int32) {
	if t := d.thread(tid); t != nil {
		d.mu.Lock()
		t.exitVC = t.vc
		d.mu.Unlock()
	}
}

// ThreadJoin: thread tid joined the thread with pthread_t handle
// (pthread_join). The joiner acquires the joined thread's final clock, and
// the joined thread leaves every threadset.
func (d *Detector) ThreadJoin(tid int32, handle uint64) {
	t := d.thread(tid)
	child, ok := d.joinClock(t, handle)
	if ok {
		// Join rule (ch. 5.1.2), applied lazily: cells whose threadset
		// loses its last other member return to exclusive when next
		// touched (Detector.afterJoin).
		d.tsets.Kill(uint16(child))
	}
	if t != nil {
		d.tick(t)
	}
}

// joinClock forgets handle and joins its thread's final clock (its current
// one if it has not recorded its exit) into t's, if t is known.
func (d *Detector) joinClock(t *thread, handle uint64) (int32, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	child, ok := d.handles[handle]
	delete(d.handles, handle)
	var vc *shadow.VC
	if ok && int(child) < len(d.threads) {
		c := d.threads[child]
		vc = c.exitVC
		if vc == nil {
			vc = c.vc
		}
	}
	if t != nil && vc != nil {
		t.join(vc)
	}
	if ok && int(child) < len(d.threads) {
		d.threads[child].forget()
	}
	return child, ok
}

// forget drops the clocks of a thread that has been joined: nobody joins
// it again, and a program that creates threads by the thousand would
// otherwise keep one vector clock per thread that ever lived (each as long
// as the number of threads then), and its region records. No event comes
// from it any more (the C side retired its record at its exit); an empty
// clock stands in, which grows only if one did. What reports say of it
// (tid, parent, where it was created) stays.
func (t *thread) forget() {
	t.vc, t.exitVC, t.snap = new(shadow.VC), nil, nil
	t.depth, t.cond, t.pending, t.rec = nil, condState{}, nil, nil
	t.overKnown = [len(t.overKnown)]*wrSeg{}
}
