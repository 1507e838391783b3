package main

/*
#include "hgrt.h"
*/
import "C"

import (
	"sync/atomic"
	"unsafe"

	"hgrewrite/abi"
	"hgrewrite/shadow"
)

// publishEpoch stores a thread's current epoch where the C fast path reads
// it (hg_tstate). Only the thread itself writes its entry (or its creator,
// before it runs), and only the thread reads it, after the call into Go
// returns: a plain store is enough. (Go's atomic store is an exchange,
// which waits for every store before it to reach the cache: 4.6% of
// bench/pipeline.c's samples, where a region makes several.)
func publishEpoch(tid int32, e uint64) {
	if tid >= 0 && tid < C.HG_MAX_THREADS {
		*(*uint64)(unsafe.Pointer(&C.hg_tstate[tid].epoch)) = e
		markTrace(tid, e)
	}
}

// snapshotAt is the clock of the hand-off ways thread tid's C side
// published at its clock `clock`, read from tid's snapshot ring as
// hg_snap_at (rt_internal.h, where the layout is) reads it, into a new
// clock in the Go heap, or have when it is that clock already. Its own
// component is the entry's (at most clock). ok is false when the entry
// changed while it was read (the caller reads again); vc is nil when tid
// has no ring.
func snapshotAt(tid uint16, clock uint64, have *shadow.VC) (vc *shadow.VC, ok bool) {
	r := snapshotRing(tid)
	if r == nil {
		return nil, true
	}
	word := func(p unsafe.Pointer, i uint64) uint64 { return atomic.LoadUint64((*uint64)(unsafe.Add(p, 8*i))) }
	size := 3 + word(r, 0) // words an entry takes
	entry := func(k uint64) unsafe.Pointer { return unsafe.Add(r, 16+8*(k%C.HG_SNAPS)*size) }
	// the newest entry from at most clock, by halves (a
	// materialization asks for old ones too); an entry being rewritten
	// means the ones before it are gone
	h := word(r, 1)
	l, hi := h-min(h, C.HG_SNAPS), h
	pick := int64(-1)
	if e := entry(h - 1); h > 0 && word(e, 0) == 2*h && word(e, 1) <= clock && word(e, 0) == 2*h {
		l = hi // the newest, most often
		pick = int64(h - 1)
	}
	for l < hi {
		k := l + (hi-l)/2
		e := entry(k)
		valid := word(e, 0) == 2*k+2
		from := word(e, 1)
		switch {
		case !valid || word(e, 0) != 2*k+2:
			l = k + 1
		case from <= clock:
			pick, l = int64(k), k+1
		default:
			hi = k
		}
	}
	if pick < 0 && hi < h {
		pick = int64(hi) // gone: the oldest later clock of the thread's left
	}
	if pick < 0 {
		return nil, false
	}
	e, q := entry(uint64(pick)), 2*uint64(pick)+2
	n := word(e, 2)
	if word(e, 0) != q || n > size-3 {
		return nil, false
	}
	comp := func(v uint64) uint64 {
		if v == uint64(tid) {
			return min(word(e, 3+v), clock)
		}
		return word(e, 3+v)
	}
	if have != nil && uint64(have.Len()) == n {
		v := uint64(0)
		for v < n && have.Get(uint16(v)) == comp(v) {
			v++
		}
		if v == n && word(e, 0) == q {
			return have, true // no copy: the ways of a materialization mostly share one
		}
	}
	c := make([]uint64, max(n, uint64(tid)+1))
	for v := range n {
		c[v] = comp(v)
	}
	if word(e, 0) != q {
		return nil, false
	}
	return shadow.VCOf(c), true
}

// pushSnapshot is hg_snap_push (runtime/regionpub.c) for thread tid's
// Go side, c its clock: the ring's newest entry holds c after it, pushed
// unless it held it already. Plain stores between the entry's sequence
// word's, as the C side makes them; a call into C for each, from every
// snapshot, was the cost. false when tid has no ring, or one too small
// (the caller asks the C side, which makes one). Only the thread's own
// calls push, after every way the C side wrote was materialized.
func pushSnapshot(tid uint16, c []uint64) bool {
	r := snapshotRing(tid)
	n := uint64(len(c))
	if r == nil || int(tid) >= len(c) || n > atomic.LoadUint64((*uint64)(r)) {
		return false
	}
	at := func(p unsafe.Pointer, i uint64) *uint64 { return (*uint64)(unsafe.Add(p, 8*i)) }
	size := 3 + *at(r, 0)
	entry := func(k uint64) unsafe.Pointer { return unsafe.Add(r, 16+8*(k%C.HG_SNAPS)*size) }
	from := c[tid] & (1<<shadow.TouchedShift - 1)
	h := *at(r, 1)
	if h > 0 {
		e, v := entry(h-1), uint64(0)
		for ; v < n && (v == uint64(tid) || (v < *at(e, 2) && *at(e, 3+v) == c[v]) || (v >= *at(e, 2) && c[v] == 0)); v++ {
		}
		if v == n && *at(e, 2) <= n {
			return true // no join since
		}
	}
	e := entry(h)
	atomic.StoreUint64(at(e, 0), 2*h+1)
	*at(e, 1), *at(e, 2) = from, n
	for v := range n {
		*at(e, 3+v) = c[v]
	}
	*at(e, 3+uint64(tid)) = from
	atomic.StoreUint64(at(e, 0), 2*h+2)
	atomic.StoreUint64(at(r, 1), h+1)
	return true
}

// snapshotsPushed is how many entries thread tid's snapshot ring took
// (0: none, or no ring).
func snapshotsPushed(tid uint16) uint64 {
	if r := snapshotRing(tid); r != nil {
		return atomic.LoadUint64((*uint64)(unsafe.Add(r, 8)))
	}
	return 0
}

// snapshotRing is the address of thread tid's snapshot ring (hg_tstate's
// snaps), nil for none.
func snapshotRing(tid uint16) unsafe.Pointer {
	if int(tid) >= C.HG_MAX_THREADS {
		return nil
	}
	return atomic.LoadPointer((*unsafe.Pointer)(unsafe.Pointer(&C.hg_tstate[tid].snaps)))
}

// markTrace marks thread tid's call trace where its segment e begins
// (abi.TraceMarkEpoch; runtime/calltrace.c), between the function entries
// of the two segments: the thread itself is in the runtime, and its next
// access reads the new epoch. A creator publishing its new thread's first
// epoch marks the ring of the id's last thread, harmlessly: the new
// thread marks the ring's entries before its own as over.
func markTrace(tid int32, e uint64) {
	chunk := atomic.LoadPointer((*unsafe.Pointer)(unsafe.Pointer(&C.hg_trace_chunks[tid/C.HG_TRACE_CHUNK])))
	if chunk == nil {
		return
	}
	tr := (*C.struct_hg_trace)(unsafe.Add(chunk, uintptr(tid%C.HG_TRACE_CHUNK)*unsafe.Sizeof(C.struct_hg_trace{})))
	pos := uint16(tr.pos)
	tr.pos = C.uint16_t(pos + abi.TraceEntry)
	tr.w[pos/8] = C.uint64_t(abi.TraceMarkEpoch << 32)
	tr.w[pos/8+1] = C.uint64_t(e)
}

// ownerMoving is the cell thread tid's fast path is moving to its segment
// (hg_tstate's moving; 0: none), for Host.OwnerMoving. A thread id no
// thread has now moves nothing: a move clears the row when it ends.
func ownerMoving(tid int32) (uintptr, bool) {
	if tid < 0 || tid >= C.HG_MAX_THREADS {
		return 0, false
	}
	return uintptr(atomic.LoadUint64((*uint64)(unsafe.Pointer(&C.hg_tstate[tid].moving)))), true
}

// publishLocks stores a thread's lockset ids where the C fast path reads
// them (hg_tstate: all locks in the low half, write-mode ones in the high
// half). Only the thread itself writes and reads its entry (a plain
// store, as publishEpoch's).
func publishLocks(tid int32, held, writeHeld uint32) {
	if tid < 0 || tid >= C.HG_MAX_THREADS {
		return
	}
	*(*uint64)(unsafe.Pointer(&C.hg_tstate[tid].locks)) = uint64(held) | uint64(writeHeld)<<32
}

func publishThreadsetGen(gen uint32) {
	atomic.StoreUint32((*uint32)(unsafe.Pointer(&C.hg_tset_gen)), gen)
}

// publishShadow gives the C fast path the shadow directory and the side
// cells of split granules.
func publishShadow(dir, split uintptr) {
	C.hg_set_split_base(C.uintptr_t(split))
	C.hg_set_shadow_dir(C.uintptr_t(dir))
}
