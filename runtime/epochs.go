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

// publishSnapshot stores the address of thread tid's clock snapshot, the
// one the ways its C side publishes stand for, where other threads' C
// sides read it (hg_tstate's snap; nil: none). The snapshot is a
// shadow.VC, whose first two words are its components' address and count
// (shadow.TestVCLayout); the thread's snapPub keeps it alive. A plain
// store: other threads read it only after a way the thread's C side
// writes after this call returns.
func publishSnapshot(tid int32, snap *shadow.VC) {
	if tid >= 0 && tid < C.HG_MAX_THREADS {
		*(*uintptr)(unsafe.Pointer(&C.hg_tstate[tid].snap)) = uintptr(unsafe.Pointer(snap))
	}
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
