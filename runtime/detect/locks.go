package detect

import "hgrewrite/abi"

// Locks create no happens-before relation in the hybrid algorithm (ch.
// 5.1.1): they only change the locksets of the thread that holds them.

// lock adds a lock to t's locksets on its first acquisition (write
// also guards writes; read-mode only guards reads, as seed 004 says).
func (d *Detector) lock(t *thread, addr uint64, write bool) {
	if t.depth.take(addr) > 1 {
		return
	}
	before := t.lockIDs()
	t.held = d.locks.Add(t.held, addr)
	op := uint8(abi.LockStepRead)
	if write {
		t.writeHeld = d.locks.Add(t.writeHeld, addr)
		op = abi.LockStepWrite
	}
	d.publishLocks(t, before, LockStep{addr, op})
}

// unlock removes a lock from t's locksets when its last hold is released.
func (d *Detector) unlock(t *thread, addr uint64) {
	n := t.depth.release(addr)
	if n > 1 {
		return
	}
	step := LockStep{addr, abi.LockStepUnlock}
	if n == 0 {
		step.Op = 0 // not held: no transition the C side could meet
	}
	before := t.lockIDs()
	t.held = d.locks.Remove(t.held, addr)
	t.writeHeld = d.locks.Remove(t.writeHeld, addr)
	d.publishLocks(t, before, step)
}

// heldLocks is the mutexes a thread holds, each with the times it holds
// it (a recursive mutex, a read lock taken twice), in the order taken;
// every count is positive. A thread holds few at once: a slice searched
// from its end costs less than the map it replaced, which hashed the
// mutex at every lock and unlock (3% of bench/pipeline.c's samples).
type heldLocks []lockHold

type lockHold struct {
	mutex uint64
	n     int
}

// count is how many times m is held, 0 if not.
func (h heldLocks) count(m uint64) int {
	if i := h.index(m); i >= 0 {
		return h[i].n
	}
	return 0
}

func (h heldLocks) index(m uint64) int {
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].mutex == m {
			return i
		}
	}
	return -1
}

// take adds a hold of m and returns how many there are now.
func (h *heldLocks) take(m uint64) int {
	if i := h.index(m); i >= 0 {
		(*h)[i].n++
		return (*h)[i].n
	}
	*h = append(*h, lockHold{m, 1})
	return 1
}

// release drops a hold of m and returns how many there were (0: m was
// not held).
func (h *heldLocks) release(m uint64) int {
	i := h.index(m)
	if i < 0 {
		return 0
	}
	n := (*h)[i].n
	if n > 1 {
		(*h)[i].n--
		return n
	}
	*h = append((*h)[:i], (*h)[i+1:]...)
	return 1
}

// only reports whether t holds no lock but m, if any.
func (h heldLocks) only(m uint64) bool {
	return len(h) == 0 || len(h) == 1 && h[0].mutex == m
}

// lockIDs is t's lockset ids as the C side keeps them (Host.PublishLocks).
func (t *thread) lockIDs() uint64 { return uint64(t.held) | uint64(t.writeHeld)<<32 }

// publishLocks gives the C side t's locksets, changed by step from
// before (no step: a reset).
func (d *Detector) publishLocks(t *thread, before uint64, step LockStep) {
	d.host.PublishLocks(t.tid, t.held, t.writeHeld)
	if step.Op != 0 && t.rec != nil {
		t.rec.NoteLockStep(before, t.lockIDs(), step)
	}
}
