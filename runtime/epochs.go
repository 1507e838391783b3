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
	h := word(r, 1)
	lo := h - min(h, C.HG_SNAPS)
	pick := int64(-1)
	for k := h; k > lo; {
		k--
		e := entry(k)
		if word(e, 0) != 2*k+2 {
			break
		}
		from := word(e, 1)
		if word(e, 0) != 2*k+2 {
			break
		}
		if pick = int64(k); from <= clock {
			break
		}
	}
	if pick < 0 {
		return nil, false
	}
	e, q := entry(uint64(pick)), 2*uint64(pick)+2
	n := word(e, 2)
	if word(e, 0) != q || n > size-3 {
		return nil, false
	}
	c := make([]uint64, max(n, uint64(tid)+1))
	same := have != nil && have.Len() <= len(c)
	for v := range n {
		c[v] = word(e, 3+v)
		if v == uint64(tid) {
			c[v] = min(c[v], clock)
		}
		same = same && have.Get(uint16(v)) == c[v]
	}
	if word(e, 0) != q {
		return nil, false
	}
	if same {
		return have, true
	}
	return shadow.VCOf(c), true
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
