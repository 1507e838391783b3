package detect

import "hgrewrite/abi"

// Locks create no happens-before relation in the hybrid algorithm (ch.
// 5.1.1): they only change the locksets of the thread that holds them.

// lock adds a lock to t's locksets on its first acquisition (write
// also guards writes; read-mode only guards reads, as seed 004 says).
func (d *Detector) lock(t *thread, addr uint64, write bool) {
	if t.depth == nil {
		t.depth = map[uint64]int{}
	}
	t.depth[addr]++
	if t.depth[addr] > 1 {
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
	if t.depth[addr] > 1 {
		t.depth[addr]--
		return
	}
	step := LockStep{addr, abi.LockStepUnlock}
	if t.depth[addr] == 0 {
		step.Op = 0 // not held: no transition the C side could meet
	}
	delete(t.depth, addr)
	before := t.lockIDs()
	t.held = d.locks.Remove(t.held, addr)
	t.writeHeld = d.locks.Remove(t.writeHeld, addr)
	d.publishLocks(t, before, step)
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
