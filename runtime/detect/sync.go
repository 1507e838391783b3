package detect

import "hgrewrite/shadow"

// Release publishes thread tid's past on the synchronisation object at
// addr (sem_post, pthread_once's initialiser). Ignored with lib=no.
func (d *Detector) Release(tid int32, addr uint64) {
	if t := d.thread(tid); t != nil && d.opts.Lib {
		d.release(t, addr)
	}
}

// Acquire makes thread tid's next segment happen after everything released
// on addr (sem_wait, pthread_once's callers). Ignored with lib=no.
func (d *Detector) Acquire(tid int32, addr uint64) {
	if t := d.thread(tid); t != nil && d.opts.Lib {
		d.acquire(t, addr)
	}
}

// release publishes t's past on obj: TS_obj <- TS_obj joined with TS_t, and t
// starts a new segment.
func (d *Detector) release(t *thread, obj uint64) {
	d.mu.Lock()
	vc := d.syncVC[obj]
	if vc == nil {
		vc = new(shadow.VC) // all zero: nothing released yet
		d.syncVC[obj] = vc
	}
	vc.Join(t.vc)
	d.mu.Unlock()
	d.tick(t)
}

// acquire makes t's new segment happen after everything released on obj.
func (d *Detector) acquire(t *thread, obj uint64) {
	d.mu.Lock()
	if vc := d.syncVC[obj]; vc != nil {
		t.join(vc)
	}
	d.mu.Unlock()
	d.tick(t)
}

// barrier tracks the generations of a pthread barrier, so that a thread
// leaving round k acquires what was released in round k only: a slow
// thread must not pick up releases of round k+1 (its own round's accesses
// would look ordered).
type barrier struct {
	count   uint64
	arrived uint64
	gens    map[uint64]*shadow.VC
}

// BarrierInit starts counting the rounds of the barrier at addr, which
// count threads pass together (pthread_barrier_init).
func (d *Detector) BarrierInit(addr, count uint64) {
	if count == 0 {
		count = 1
	}
	d.mu.Lock()
	d.barriers[addr] = &barrier{count: count}
	d.mu.Unlock()
}

// BarrierArrive releases thread tid into the round of the barrier at addr
// it arrives in, before it waits, and returns the round for BarrierLeave.
func (d *Detector) BarrierArrive(tid int32, addr uint64) uint64 {
	if t := d.thread(tid); t != nil && d.opts.Lib {
		return d.barrierArrive(t, addr)
	}
	return 0
}

// BarrierLeave makes thread tid, back from the wait, acquire what round gen
// of the barrier at addr released.
func (d *Detector) BarrierLeave(tid int32, addr, gen uint64) {
	if t := d.thread(tid); t != nil && d.opts.Lib {
		d.barrierLeave(t, addr, gen)
	}
}

// barrierArrive releases t into its round's clock and returns the round.
func (d *Detector) barrierArrive(t *thread, addr uint64) uint64 {
	d.mu.Lock()
	b := d.barriers[addr]
	if b == nil {
		b = &barrier{count: 1}
		d.barriers[addr] = b
	}
	gen := b.arrived / b.count
	b.arrived++
	b.round(gen).Join(t.vc)
	d.mu.Unlock()
	d.tick(t)
	return gen
}

// round is the clock of round gen, made on its first arrival (under d.mu).
func (b *barrier) round(gen uint64) *shadow.VC {
	vc := b.gens[gen]
	if vc == nil {
		if b.gens == nil {
			b.gens = map[uint64]*shadow.VC{}
		}
		vc = new(shadow.VC)
		b.gens[gen] = vc
		delete(b.gens, gen-2) // every thread has left round gen-2 by now
	}
	return vc
}

func (d *Detector) barrierLeave(t *thread, addr, gen uint64) {
	d.mu.Lock()
	if b := d.barriers[addr]; b != nil && b.gens[gen] != nil {
		t.join(b.gens[gen])
	}
	d.mu.Unlock()
	d.tick(t)
}
