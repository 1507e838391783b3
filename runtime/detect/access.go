package detect

import (
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"hgrewrite/abi"
	"hgrewrite/msm"
	"hgrewrite/shadow"
)

// accessFree marks, in the flags of an access (and of the cell's
// previous-access word, shadow.PackAccess), the write a free makes
// (heap.go). It reuses the bit of abi.Post, which is free there: Post
// events are atomics' acquire halves and never reach Detector.access.
const accessFree = abi.Post

// prevFlags are the flags an access keeps in the previous-access word:
// what a report says of it (read, write, atomic, free).
const prevFlags = abi.Read | abi.Write | abi.Atomic | accessFree

// A shadow cell (four words per 8-byte granule, see package shadow and
// shadow/cell.go): word 0 is state | TS_d epoch (with the granule's touched
// mask), word 1 C_d lockset | S_d threadset, words 2 and 3 the access
// history (step).

func loadCell(c *[shadow.CellWords]uint64) msm.Cell { return cellOf(c[0], c[1]) }

// cellOf decodes words 0 and 1 of a cell.
func cellOf(w0, w1 uint64) msm.Cell {
	locks, threads := shadow.UnpackSets(w1)
	return msm.Cell{State: msm.State(shadow.Word0State(w0)), TS: msm.Epoch(w0 & shadow.CellEpochMask),
		Locks: msm.LocksetID(locks), Threads: msm.ThreadsetID(threads)}
}

// casCell writes m into c with the touched mask touched (in place) if
// word 0 still holds old, and reports whether it did. Word 0 is written
// with a compare-and-swap: the C fast path changes it without the stripe
// lock (a location's first access, a new segment of its owner), and a
// step that overwrote such a change would lose that access. Word 1 goes
// first, so that the fast path never pairs the new state with an old
// lockset; it is put back when word 0 has changed, by compare-and-swap:
// the fast path that changed word 0 may have written its own word 1
// since (a move's E_d, after its compare-and-swap of word 0), which a
// plain store would have overwritten with the lockset of the state
// before both.
func casCell(c *[shadow.CellWords]uint64, old uint64, m msm.Cell, touched uint64) bool {
	w1, mine := c[1], shadow.PackSets(uint32(m.Locks), uint32(m.Threads))
	atomic.StoreUint64(&c[1], mine)
	if atomic.CompareAndSwapUint64(&c[0], old, shadow.PackWord0(uint8(m.State), uint64(m.TS), touched)) {
		return true
	}
	atomic.CompareAndSwapUint64(&c[1], mine, w1)
	return false
}

// access runs the state machine on every location an access touches: a
// granule, or the touched bytes of a split granule (shadow/split.go).
func (d *Detector) access(t *thread, addr, size uint64, pc uint32, flags uint8) {
	end := addr + size
	if end < addr || end > shadow.MaxAddr {
		return
	}
	a := t.accessOf(flags&abi.Write != 0)
	prevWord := shadow.PackAccess(pc, uint16(t.tid), flags&prevFlags, addr, size, uint32(a.Locks))
	for g := addr &^ (shadow.GranuleSize - 1); g < end; g += shadow.GranuleSize {
		c := d.mem.Cell(g)
		if c == nil {
			return
		}
		mask := shadow.ByteMask(addr, end, g)
		if d.syncAccess(t, g, c, addr, mask, flags&abi.Write != 0) {
			return
		}
		if d.unchanged(t, c, a, mask) {
			continue
		}
		word := prevWord
		if shadow.AccessBytes(word) != mask {
			// the partial first or last granule of a longer access (the
			// tail of a memcpy), or three bytes of a range: the history
			// keeps the bytes covered here, not a power of two of them
			word = shadow.PackAccessBytes(pc, uint16(t.tid), flags&prevFlags, mask, uint32(a.Locks))
		}
		r := d.granule(t, g, c, a, mask, word)
		if r.race {
			d.rep.race(t, addr, size, pc, flags, r.prev, r.prevClock, r.next)
		}
	}
}

// Synchronisation variables. The bytes that an atomic instruction,
// naturally aligned, operated on become a synchronisation variable
// (msm.Spin): plain accesses to them are acquires and releases
// (syncAccess), never races. The other bytes of their granule stay plain
// data: a cell in msm.Spin names its synchronisation bytes in its touched
// mask, and a plain access to the granule's other bytes splits it
// (shadow/split.go), so that they are checked as data of their own (a
// reference count next to the field it guards, a flag byte next to a
// result). Until 2026-11-27 one- and two-byte atomics were left out, a
// rule of the 4-byte granules, whose whole cell a flag made a
// synchronisation variable: a spinlock on a C11 atomic_flag (test and set
// is an xchg of a byte, the clear a plain store) then ordered nothing,
// and everything it protected was reported.
const syncMinSize = 1

// markSync makes the bytes of [addr, addr+size) a synchronisation
// variable: an atomic instruction operated on them (events.go,
// atomicEvent).
func (d *Detector) markSync(addr, size uint64) {
	if size < syncMinSize || addr%min(size, shadow.GranuleSize) != 0 {
		return
	}
	for g := addr &^ (shadow.GranuleSize - 1); g < addr+size; g += shadow.GranuleSize {
		c := d.mem.Cell(g)
		if c == nil {
			return
		}
		bytes := shadow.ByteMask(addr, addr+size, g)
		if w0 := atomic.LoadUint64(&c[0]); shadow.Word0State(w0) == uint8(msm.Spin) && uint64(shadow.Touched(w0))&bytes == bytes {
			continue // marked already: every locked instruction on the word comes here
		}
		d.mem.Lock(g)
		d.markSyncBytes(c, bytes)
		d.mem.Unlock(g)
	}
}

// markSyncBytes makes the bytes of cell c (locked) a synchronisation
// variable: the whole cell, while no other byte of it was touched; else
// the side cells of those bytes.
func (d *Detector) markSyncBytes(c *[shadow.CellWords]uint64, bytes uint64) {
	for !shadow.IsSplit(c) {
		w0 := atomic.LoadUint64(&c[0])
		touched, spin := uint64(shadow.Touched(w0)), shadow.Word0State(w0) == uint8(msm.Spin)
		if spin || touched&^bytes == 0 {
			// the fast path moves data cells: taken from it first, as
			// a split does
			if !spin && !shadow.Take(c, w0, d.quiet(c, w0)) {
				continue
			}
			if !spin {
				touched = 0 // a data location's history goes
			}
			c[1], c[2], c[3] = 0, 0, 0
			atomic.StoreUint64(&c[0], shadow.PackWord0(uint8(msm.Spin), 0, (touched|bytes)<<shadow.TouchedShift))
			return
		}
		if s, moved := d.mem.Split(c, w0, d.quiet(c, w0)); s == nil && !moved {
			return // no memory for side cells: the bytes stay data
		}
	}
	side := d.mem.Side(c)
	for b := range side {
		if bytes&(1<<b) != 0 {
			s := &side[b]
			s[1], s[2], s[3] = 0, 0, 0
			// word 0 last, in one store: the C fast path reads side cells
			atomic.StoreUint64(&s[0], shadow.PackWord0(uint8(msm.Spin), 0, shadow.TouchedMask))
		}
	}
}

// syncBytes is the mask of the bytes of cell c that are a
// synchronisation variable.
func (d *Detector) syncBytes(c *[shadow.CellWords]uint64) uint64 {
	w0 := atomic.LoadUint64(&c[0])
	switch shadow.Word0State(w0) {
	case uint8(msm.Spin):
		return uint64(shadow.Touched(w0))
	case shadow.StateSplit:
		var m uint64
		for b, s := range d.mem.Side(c) {
			if shadow.Word0State(atomic.LoadUint64(&s[0])) == uint8(msm.Spin) {
				m |= 1 << b
			}
		}
		return m
	}
	return 0
}

// touchesSync reports whether [addr, addr+size) touches a
// synchronisation variable, whose plain reads acquire (syncAccess).
func (d *Detector) touchesSync(addr, size uint64) bool {
	for g := addr &^ (shadow.GranuleSize - 1); g < addr+size; g += shadow.GranuleSize {
		if c := d.mem.Cell(g); c != nil && d.syncBytes(c)&shadow.ByteMask(addr, addr+size, g) != 0 {
			return true
		}
	}
	return false
}

// syncAccess handles a plain access to the bytes mask of granule g (cell
// c): if they touch a synchronisation variable, a read acquires what
// atomics released at addr and a write releases there, and it reports
// true. An access to only the other bytes of a cell in msm.Spin splits
// it, and is checked as data.
func (d *Detector) syncAccess(t *thread, g uint64, c *[shadow.CellWords]uint64, addr, mask uint64, write bool) bool {
	sync := d.syncBytes(c)
	if sync == 0 {
		return false
	}
	if sync&mask == 0 {
		d.mem.Lock(g)
		if w0 := c[0]; shadow.Word0State(w0) == uint8(msm.Spin) {
			if s, _ := d.mem.Split(c, w0, nil); s == nil { // only the Go side changes a cell in msm.Spin
				sync = mask // no memory for side cells: the whole granule stays one
			}
		}
		d.mem.Unlock(g)
	}
	if sync&mask == 0 {
		return false
	}
	if write {
		d.release(t, addr)
	} else {
		d.acquire(t, addr)
	}
	return true
}

// accessOf is t's access as the state machines see it: its segment and the
// locks that guard it (write-mode locks for a write).
func (t *thread) accessOf(write bool) msm.Access {
	a := msm.Access{Write: write, Thread: msm.ThreadID(t.tid), TS: t.epoch(), Locks: msm.LocksetID(t.held)}
	if write {
		a.Locks = msm.LocksetID(t.writeHeld)
	}
	return a
}

// granule steps the cell c of granule g under its stripe lock: the cell
// itself, or the side cells of the bytes mask once the granule is split.
func (d *Detector) granule(t *thread, g uint64, c *[shadow.CellWords]uint64, a msm.Access, mask, prevWord uint64) stepResult {
	d.mem.Lock(g)
	defer d.mem.Unlock(g)
	for !shadow.IsSplit(c) {
		w0 := atomic.LoadUint64(&c[0])
		touched := uint64(shadow.Touched(w0))
		whole := touched&mask != 0 || !d.splits(t, c, touched)
		if whole && touched&^mask != 0 && d.racesOn(t, c, a) {
			// A race on some of the granule's bytes must not end the
			// checks of the others (Race absorbs): a one-byte flag and
			// its neighbour written by the same thread.
			whole = false
		}
		if whole {
			return d.step(t, c, a, prevWord, mask, (touched|mask)<<shadow.TouchedShift, false)
		}
		side, moved := d.mem.Split(c, w0, d.quiet(c, w0))
		if moved {
			continue // the fast path changed the cell: look again
		}
		if side == nil {
			return d.step(t, c, a, prevWord, mask, (touched|mask)<<shadow.TouchedShift, false)
		}
	}
	var r stepResult
	side := d.mem.Side(c)
	for b := range side {
		if mask&(1<<b) != 0 && !r.race {
			r = d.step(t, &side[b], a, prevWord, 1<<b, shadow.TouchedMask, true)
		}
	}
	return r
}

// unchanged reports, without the stripe lock, whether access a to the
// bytes mask of cell c would leave the cell as it is: the usual case for
// data that threads share and keep reading (or writing under the same
// lock) within one segment. Then neither the lock nor the cell's cache
// line is written, which is what makes shared data expensive. The cell is
// read without the lock: if another thread changes it at that moment, this
// access is judged against the state just before, as the C fast path
// does. A step that would report a race is never skipped, and neither is
// one the lazy join rule or a split would change. The previous-access word
// keeps the last access that changed the cell.
func (d *Detector) unchanged(t *thread, c *[shadow.CellWords]uint64, a msm.Access, mask uint64) bool {
	w0 := atomic.LoadUint64(&c[0])
	if shadow.Word0State(w0) == shadow.StateSplit || uint64(shadow.Touched(w0))&mask != mask {
		return false
	}
	cur := cellOf(w0, atomic.LoadUint64(&c[1]))
	if cur.State == msm.New || msm.HasThreadset(cur.State) && d.tsets.Retired(uint32(cur.Threads)) {
		return false
	}
	if cur.State == msm.ExclWrite && cur.TS == a.TS && !a.Write {
		// see stepFrom
		return msm.Meet(t.env, cur.Locks, a.Locks) == cur.Locks && remembered(c[2], c[3], uint16(t.tid), mask)
	}
	if !msm.HasThreadset(cur.State) {
		// Exclusive to another thread (the C fast path takes this
		// thread's own): the access changes the state.
		return false
	}
	next, race := msm.Step(d.machine, cur, a, t.env)
	if race || next != cur {
		return false
	}
	t.knowMember(cur)
	return true
}

// knowMember tells t's fast path that the threadset of cell c holds t
// (after t's access to it): the next such access that would change
// nothing stays in C.
func (t *thread) knowMember(c msm.Cell) {
	if t.rec != nil && msm.HasThreadset(c.State) {
		t.rec.KnowMember(uint32(c.Threads), t.tsetGen)
	}
}

// racesOn says whether the state machine would call access a to cell c
// a race.
func (d *Detector) racesOn(t *thread, c *[shadow.CellWords]uint64, a msm.Access) bool {
	cur := loadCell(c)
	if cur.State == msm.Race || msm.HasThreadset(cur.State) && d.tsets.Retired(uint32(cur.Threads)) {
		return false
	}
	_, race := msm.Step(d.machine, cur, a, t.env)
	return race
}

// splits says whether an access by t to bytes of cell c outside its
// touched mask makes the granule split: yes, unless the granule is new or
// still exclusive to t (then the bytes are simply added to it).
func (d *Detector) splits(t *thread, c *[shadow.CellWords]uint64, touched uint64) bool {
	if touched == 0 {
		return false
	}
	cur := loadCell(c)
	switch cur.State {
	case msm.New:
		return false
	case msm.ExclRead, msm.ExclWrite:
		return int32(epochTID(cur.TS)) != t.tid
	}
	return true
}

// stepResult is what one state-machine step found.
type stepResult struct {
	race bool
	prev uint64 // the cell's previous-access word
	// prevClock is the clock of prev's segment where the cell knows it
	// (the exclusive owner's access, or the past owner's), else 0: reports
	// look for prev's callers among that segment's calls (calltrace.go).
	prevClock uint64
	next      msm.Cell
}

// step applies access a to the bytes bytes (a mask) of cell c, whose
// stripe lock the caller holds, records prevWord in the cell's access
// history and leaves the touched mask touched (in place) in word 0.
//
// A race is reported only with a partner: an access of another thread in
// the history that conflicts with a (one of the two a write, no lock held
// at both). When the
// state machine calls a race that nothing in the history can be paired
// with (the lockset emptied by the thread's own accesses, or reads against
// reads), nothing is reported and the location keeps its state, unless
// it is a byte of a split granule (side) in an exclusive state (ownedBy).
func (d *Detector) step(t *thread, c *[shadow.CellWords]uint64, a msm.Access, prevWord, bytes, touched uint64, side bool) stepResult {
	wait := true // for the owner's fast path, once (historyLags)
	for {
		w0 := atomic.LoadUint64(&c[0])
		if r, ok := d.stepFrom(t, c, w0, a, prevWord, bytes, touched|w0&shadow.TouchedMask, side, &wait); ok {
			return r
		}
		// the fast path changed word 0 meanwhile: step again from there
	}
}

// stepFrom is step from word 0 w0; it changes nothing and reports false
// when word 0 no longer holds w0, or when the owner's history caught up
// with it (historyLags, while *wait: once per step).
func (d *Detector) stepFrom(t *thread, c *[shadow.CellWords]uint64, w0 uint64, a msm.Access, prevWord, bytes, touched uint64, side bool, wait *bool) (stepResult, bool) {
	if d.moverMoves(t.tid, c, w0) {
		return stepResult{}, false // a move was under way: words 1 to 3 lagged word 0
	}
	cur := cellOf(w0, c[1])
	if cur.State == msm.ExclWrite && cur.TS == a.TS && !a.Write {
		// A read after a write in the same segment: the write still
		// conflicts with parallel reads, so the location stays in
		// Exclusive-Write (the dissertation's machines would move to
		// Exclusive-Read and forget the write). The fast path relies
		// on it too. The owner's lockset still meets the read's (msm,
		// choice 13); a read that shrinks it is the access a parallel
		// write would race with, so the history learns of it, as it does
		// of a read of bytes the latest access did not cover (another
		// variable of the granule: a parallel write to it has no partner
		// otherwise). The C fast path records both (hg_history).
		locks := msm.Meet(t.env, cur.Locks, a.Locks)
		latest, other, moved := c[2], c[3], false
		if locks != cur.Locks || !remembered(latest, other, uint16(t.tid), bytes) {
			cur.Locks = locks
			latest, other, moved = remember(latest, other, prevWord, true)
			cur.Threads = msm.ThreadsetID(pastClock(cur, other, moved))
		}
		if !casCell(c, w0, cur, touched) {
			return stepResult{}, false
		}
		c[2], c[3] = latest, other
		return stepResult{}, true
	}
	if msm.HasThreadset(cur.State) && d.tsets.Retired(uint32(cur.Threads)) {
		cur = d.afterJoin(t, cur)
	}
	next, race := msm.Step(d.machine, cur, a, t.env)
	var partner, partnerClock uint64
	if race {
		other := c[3]
		if orderedPast(t, cur, other) {
			other = 0 // ordered before this access: no partner
		}
		if partner = d.conflicting(c[2], other, t.tid, a, bytes); partner == 0 {
			next, race = cur, false
			if side && exclusive(cur.State) {
				next = ownedBy(a)
			}
		} else if *wait && partner == c[2] && exclusive(cur.State) && accessTID(partner) == epochTID(cur.TS) &&
			d.rep.wouldPrint(accessPC(prevWord), accessPC(partner)) {
			*wait = false
			d.historyWaited.Add(1)
			if d.ownerLags(epochTID(cur.TS), c, w0) {
				return stepResult{}, false // the owner's fast path was between its two stores: step again
			}
		}
		partnerClock = historyClock(cur, partner, c[2])
	} else if partner = d.pastConflict(t, c, cur, a, bytes); partner != 0 {
		next, race = cur, true
		next.State = msm.Race
		partnerClock = uint64(cur.Threads)
	}
	sameSegment := cur.TS == a.TS && exclusive(next.State)
	latest, other, moved := remember(c[2], c[3], prevWord, sameSegment)
	if exclusive(next.State) {
		next.Threads = msm.ThreadsetID(pastClock(cur, other, moved))
	}
	if !casCell(c, w0, next, touched) {
		return stepResult{}, false
	}
	c[2], c[3] = latest, other
	if !race {
		t.knowMember(next)
	}
	return stepResult{race: race, prev: partner, prevClock: partnerClock, next: next}, true
}

// historyClock is the clock of the segment of partner, an access in the
// history of exclusive cell cur whose latest access is latest: the
// owner's segment for the owner's latest access, the past owner's clock
// for the other one (pastClock); 0 when not known.
func historyClock(cur msm.Cell, partner, latest uint64) uint64 {
	switch {
	case partner == 0 || !exclusive(cur.State):
		return 0
	case partner == latest && accessTID(partner) == epochTID(cur.TS):
		return uint64(cur.TS) & shadow.CellClockMask
	case partner != latest:
		return uint64(cur.Threads)
	}
	return 0
}

func exclusive(s msm.State) bool { return s == msm.ExclRead || s == msm.ExclWrite }

// accessPC is the code location of access word w.
func accessPC(w uint64) uint32 {
	pc, _, _, _, _ := shadow.UnpackAccess(w)
	return pc
}

// historyLags reports whether cell c's latest access (word 2) changes
// while word 0 still holds w0, within a bounded wait: ownerLags' way for a
// host that cannot say whether the owner is moving the cell. The C fast path
// moves a thread's own cell to its new segment with a compare-and-swap of
// word 0 and then writes the access into word 2 (fastpath.c,
// hg_granule, hg_own_move): a step that reads the two in between pairs the new
// segment's race verdict with the owner's previous access, which may be
// ordered before the accessing thread (two variables of one granule: the
// owner wrote the one before a hand-off, the other after). So before a
// race is reported against the owner's latest access, the owner is given
// the time to finish; only a race about to be printed waits (a new
// context), which bounds the waits of a racy program by its reports: a
// wait per racing granule made xz -T2 take minutes.
func historyLags(c *[shadow.CellWords]uint64, w0 uint64) bool {
	latest := atomic.LoadUint64(&c[2])
	for i := 0; i < historyWaits; i++ {
		if atomic.LoadUint64(&c[2]) != latest {
			return true
		}
		if atomic.LoadUint64(&c[0]) != w0 {
			return true
		}
		nap(historyWait << i)
	}
	return atomic.LoadUint64(&c[2]) != latest
}

// ownerLags reports whether cell c's history lagged its state w0 when the
// step read them, so that the step must be made again. A host that says
// whether the owner is moving the cell (Host.OwnerMoving) has made the
// step wait at its start (ownerMoves): words 1 to 3, read after, change
// only after word 0 does, which the step's compare-and-swap sees. A host
// that cannot tell leaves the step to historyLags' bounded wait, which an
// owner kept off the processor longer outlasts. (Both of the runtime's
// hosts tell, a forked child's detector too since 2026-11-27.)
func (d *Detector) ownerLags(owner uint16, c *[shadow.CellWords]uint64, w0 uint64) bool {
	if _, ok := d.host.OwnerMoving(int32(owner)); ok {
		return false
	}
	return historyLags(c, w0)
}

// moverMoves waits while the thread whose C fast path last moved cell c
// (locked) to word 0 w0 writes words 1 to 3 (ownerMoves), when that is
// another thread than self (-1: any), and reports whether it waited. The fast path
// moves a cell in an exclusive state (its owner's own move, or another
// thread's take-over) and in MSM-short's Shared-Modified (a write under
// the locks of C_d: hg_shared_write); word 0 then names the mover.
func (d *Detector) moverMoves(self int32, c *[shadow.CellWords]uint64, w0 uint64) bool {
	state, mover := msm.State(shadow.Word0State(w0)), shadow.CellEpochTID(w0)
	if !exclusive(state) && state != msm.SharedModified || int32(mover) == self {
		return false
	}
	return d.ownerMoves(mover, c)
}

// quiet is shadow.Take's wait for cell c, taken from word 0 w0: for the
// move that wrote w0, or that began before the cell was taken, to write
// words 1 to 3 (moverMoves), which a split copies into the side cells.
func (d *Detector) quiet(c *[shadow.CellWords]uint64, w0 uint64) func() {
	return func() { d.moverMoves(-1, c, w0) }
}

// ownerMoves waits while owner, the exclusive owner of cell c (locked),
// moves it to a new segment (Host.OwnerMoving): between its
// compare-and-swap of word 0 and its stores of words 1 to 3, which a step
// or a split must not read. It waits for the owner's progress, not for a
// time (up to ownerWaitMax, against an owner stopped for good), and
// reports whether it waited.
func (d *Detector) ownerMoves(owner uint16, c *[shadow.CellWords]uint64) bool {
	cell := uintptr(unsafe.Pointer(c))
	moving, ok := d.host.OwnerMoving(int32(owner))
	if !ok || moving != cell {
		return false
	}
	for slept := time.Duration(0); moving == cell && slept < ownerWaitMax; slept += historyWait {
		nap(historyWait)
		moving, _ = d.host.OwnerMoving(int32(owner))
	}
	return true
}

// ownerWaitMax bounds ownerMoves' wait: a move is a few instructions, but
// its thread may be stopped (SIGSTOP, a debugger).
const ownerWaitMax = time.Second

// historyWaits and historyWait bound historyLags, which a step makes
// once (historyWait is ownerMoves' nap too): a sleep gives the processor
// to a preempted owner thread, whose two stores are a few instructions
// apart. The sleeps double, 6.35 ms in all: on a loaded processor the
// owner may wait behind other programs (pinned to one CPU with three
// other programs, 1.55 ms let 1 false report through in 4,800 runs of
// cv_nested_wait_loops; 6.35 ms, none; a clean-clone make test, once).
const (
	historyWaits = 7
	historyWait  = 50 * time.Microsecond
)

// nap sleeps in the kernel, keeping the Go scheduler out of it: the
// detector runs on the program's threads, each a locked M of a cgo
// callback, and time.Sleep there parks the goroutine on a runtime timer
// that only a thread in the network poller fires. That took a
// millisecond or more per sleep, and in xz -T2 the wake-up never came
// (a hang, the worker parked in time.Sleep while the poller's claim,
// sched.lastpoll == 0, was held by no thread). A raw nanosleep keeps the
// P, which is what a detector step holds for a few microseconds anyway.
func nap(d time.Duration) {
	ts := unix.NsecToTimespec(int64(d))
	unix.RawSyscall(unix.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&ts)), 0, 0)
}

// ownedBy is the location as access a leaves it when the location's
// exclusive owner happens before it (both machines: a new owner, whose
// locks become E_d). A byte of a split granule changes owner so when its
// owner's accesses in its history do not conflict with a: a split copies
// the granule's state to every byte it touched (shadow/split.go), and the
// owner of the whole may never have used this byte (a thread's int beside
// another's, both written first by the thread that made the array). Kept
// as it was, the byte would send every access of its real user to the Go
// side, and no report could come of it: a report needs a partner in the
// history. Its new owner's access there is the partner of a later
// conflicting access by the old one.
func ownedBy(a msm.Access) msm.Cell {
	s := msm.ExclRead
	if a.Write {
		s = msm.ExclWrite
	}
	return msm.Cell{State: s, TS: a.TS, Locks: a.Locks}
}

// The past owner. When a location changes owner through happens-before
// (Exclusive-Write of thread A, then thread B's access ordered after it),
// the state machines forget A's access: B's segment now stands for the
// location. A third thread C that is ordered after B's access is ordered
// after A's too, but one that is not may still be unordered with A's
// write, and the machines only compare C with B (a read after a read:
// Shared-Read, no race). The history keeps A's access in word 3; word 1's
// upper half, free in the exclusive states (they carry no threadset),
// keeps its clock, so that C's access is checked against it as well.
// The verdict on A and C then no longer depends on whether B's access was
// processed between them. 0 means unknown (no check): word 3 is not
// another thread's, or its clock does not fit 32 bits.

// pastClock is the clock of the history's other access, other (word 3
// once the step is done), while the location is exclusive; moved says the
// step moved the latest access there. A moved access that was the owner's
// gets the clock of the segment that owned the location. A word 3 that
// stays keeps its clock. Word 1 keeps a clock only for the access word 3
// holds: the C fast path, which leaves word 1 alone, moves an access there
// only while the clock is 0 (fastpath.c, hg_granule).
func pastClock(cur msm.Cell, other uint64, moved bool) uint32 {
	if !exclusive(cur.State) {
		return 0
	}
	if !moved {
		return uint32(cur.Threads)
	}
	if accessTID(other) == epochTID(cur.TS) {
		if clock := uint64(cur.TS) & shadow.CellClockMask; clock < 1<<32 {
			return uint32(clock)
		}
	}
	return 0
}

// pastConflict is the earlier access (word 3) that access a by t races
// with, if any: the location is exclusive, word 3 is another thread's
// access with a known clock (a past owner's, or the owner's own write
// before a read of a later segment) that t is not ordered after, and the
// two conflict (conflicting).
func (d *Detector) pastConflict(t *thread, c *[shadow.CellWords]uint64, cur msm.Cell, a msm.Access, bytes uint64) uint64 {
	h := c[3]
	if !exclusive(cur.State) || cur.Threads == 0 || h == 0 {
		return 0
	}
	if orderedPast(t, cur, h) {
		return 0
	}
	return d.conflicting(0, h, t.tid, a, bytes)
}

// orderedPast reports whether the history's other access h of the
// exclusive cell cur has a known clock that t is ordered after.
func orderedPast(t *thread, cur msm.Cell, h uint64) bool {
	return exclusive(cur.State) && cur.Threads != 0 && t.vc.Get(accessTID(h)) >= uint64(cur.Threads)
}

// The access history in words 2 and 3 of a cell (shadow/cell.go): the
// latest access that changed the location's state, and before it the
// latest one by another thread, or, while the location stays exclusive
// within one segment of its owner, the owner's previous access in that
// segment when the two differ in kind, bytes or locks. A read that follows a
// write in the same segment leaves the state as it is (step) and the
// history too, so the write stays, unless the read shrinks the owner's
// lockset. Two accesses of the owner's segment matter because either can
// be the one a parallel access conflicts with (a locked write after an
// unlocked read); an access of an earlier segment may be ordered before
// the parallel one and is not kept. The C fast path records its state
// changes the same way (fastpath.c, hg_history).

// historyKey is what makes two accesses of one thread worth keeping
// both: their kind (flags), bytes (size and offset) and lockset, the
// access word's fields above the thread id.
const historyKey = (1<<64 - 1) >> shadow.AccessFlagShift << shadow.AccessFlagShift

// remember adds access p to the history (latest, other); sameSegment says
// the location stays exclusive to the segment of latest, which p is in.
// moved says latest became the other access.
func remember(latest, other, p uint64, sameSegment bool) (newLatest, newOther uint64, moved bool) {
	if latest == 0 || accessTID(latest) == accessTID(p) && !keepOwn(latest, p, sameSegment) {
		return p, other, false
	}
	return p, latest, true
}

// remembered reports whether the history (latest, other) holds accesses
// of thread tid to every byte of bytes, or the access covers the whole
// granule: an access of tid's that changes nothing else in its segment
// is left out of the history then, and remembered otherwise. Two
// variables written by one store and then used one by each of two
// threads are one location, and the consumer's read of the second after
// a take-over that its read of the first made (Exclusive-Read in its
// segment, every byte touched) left the producer's later write of it no
// partner. An access of the whole granule is left out as before: the C
// fast path checks only partial ones (runtime/fastpath.c, hg_forgets),
// where a stencil's every access would pay.
func remembered(latest, other uint64, tid uint16, bytes uint64) bool {
	const whole = 1<<shadow.GranuleSize - 1
	if bytes&whole == whole {
		return true
	}
	var have uint64
	for _, h := range [2]uint64{latest, other} {
		if h != 0 && accessTID(h) == tid {
			have |= shadow.AccessBytes(h)
		}
	}
	return bytes&^have == 0
}

// keepOwn says whether the owner's earlier access latest stays in the
// history when its access p comes: in the same segment when the two
// differ in kind, bytes or locks; in a later segment when latest wrote and
// p only reads (the state machines then forget the write, which another
// thread's read may still race with: a variable written under a lock and
// read again after the unlock), or when p leaves bytes of latest's
// untouched (a thread that fills an array of ints one element per
// critical section: the write of the first element, its granule's
// latest access until the second's, was forgotten, and a read of it by
// another thread with nothing in between found no partner, in every
// schedule; ThreadSanitizer keeps four accesses per granule).
func keepOwn(latest, p uint64, sameSegment bool) bool {
	if sameSegment {
		return (latest^p)&historyKey != 0
	}
	return isWriteAccess(latest) && !isWriteAccess(p) || shadow.AccessBytes(latest)&^shadow.AccessBytes(p) != 0
}

// conflicting is the access of the history (latest, other) that access a
// by thread tid to the bytes bytes of the granule conflicts with: another
// thread's, one of the two a write, a byte in common, and no lock held at
// both. 0 if there is none.
//
// An access word names its lockset in 9 bits (shadow.AccessLocksUnknown
// past the 511th lockset interned), and a lock-heavy program passes that
// early: memcached's item locks, each taken with an LRU lock and the
// maintainer's, made thousands. Such an access may have held a lock of
// a's, so it is a partner only for an access that holds none. Until
// 2026-11-29 it was one for any access: memcached under load had
// 18 false reports a minute on variables only ever used under one lock
// (sizes[i] and heads[i] under lru_locks[i], slabclass under slabs_lock),
// the two named accesses holding it both; the state machine had called
// a race because the variable shares its granule with another guarded by
// another lock. A race between two accesses under different locks is
// then reported only from the side whose partner's lockset is named, or
// by a later access (the location keeps its state; see "Known gaps").
func (d *Detector) conflicting(latest, other uint64, tid int32, a msm.Access, bytes uint64) uint64 {
	for _, h := range [2]uint64{latest, other} {
		if h == 0 || int32(accessTID(h)) == tid || !a.Write && !isWriteAccess(h) || shadow.AccessBytes(h)&bytes == 0 {
			continue
		}
		if d.mayShareLock(h, a) {
			continue
		}
		return h
	}
	return 0
}

// mayShareLock: access word h and access a may have held a lock in
// common (conflicting).
func (d *Detector) mayShareLock(h uint64, a msm.Access) bool {
	if a.Locks == 0 {
		return false
	}
	_, _, _, _, locks := shadow.UnpackAccess(h)
	return locks == shadow.AccessLocksUnknown || d.locks.Intersect(locks, uint32(a.Locks)) != 0
}

func accessTID(w uint64) uint16 {
	_, tid, _, _, _ := shadow.UnpackAccess(w)
	return tid
}

func isWriteAccess(w uint64) bool {
	_, _, flags, _, _ := shadow.UnpackAccess(w)
	return flags&(abi.Write|accessFree) != 0
}

// afterJoin applies the join rule (ch. 5.1.2) lazily: the cell's threadset
// lost members to joins since it was last touched (shadow.Threadsets.Kill).
// If the only thread left is t, the one accessing the location now, the
// location returns to t's exclusive state: everything the other members
// did is ordered before t, which joined them or was ordered after the
// joins. If another thread s is left, the location stays shared with the
// smaller threadset: s need not be ordered after the joined threads, and
// its last access to the location is not known (its current segment is
// later than that access, and taking it would invent races with threads
// that know s only up to that access).
func (d *Detector) afterJoin(t *thread, c msm.Cell) msm.Cell {
	canon := d.tsets.Canon(uint32(c.Threads))
	members := d.tsets.Members(canon)
	if len(members) != 1 || int32(members[0]) != t.tid {
		return msm.OnJoin(c, msm.ThreadsetID(canon), false, 0)
	}
	return msm.OnJoin(c, msm.ThreadsetID(canon), true, t.epoch())
}

// env answers the state machines' questions for one access by t.
type env struct {
	d *Detector
	t *thread
}

func (e env) HappensBefore(prior msm.Epoch, a msm.Access) bool {
	tid := epochTID(prior)
	if int32(tid) == e.t.tid {
		return true // program order
	}
	return e.t.vc.Get(tid) >= uint64(prior)&shadow.CellClockMask
}

func (e env) Intersect(a, b msm.LocksetID) msm.LocksetID {
	return msm.LocksetID(e.d.locks.Intersect(uint32(a), uint32(b)))
}

func (e env) ThreadOf(p msm.Epoch) msm.ThreadID { return msm.ThreadID(epochTID(p)) }

func (e env) Pair(a, b msm.ThreadID) msm.ThreadsetID {
	return msm.ThreadsetID(e.d.tsets.Pair(uint16(a), uint16(b)))
}

func (e env) AddThread(s msm.ThreadsetID, t msm.ThreadID) msm.ThreadsetID {
	return msm.ThreadsetID(e.d.tsets.Add(uint32(s), uint16(t)))
}
