package main

/*
#include "hgrt.h"
*/
import "C"

import (
	"sync/atomic"
	"unsafe"
)

// publishEpoch stores a thread's current epoch where the C fast path reads
// it (hg_epochs). Only the thread itself writes its entry (or its creator,
// before it runs).
func publishEpoch(tid int32, e uint64) {
	if tid >= 0 && tid < C.HG_MAX_THREADS {
		atomic.StoreUint64((*uint64)(unsafe.Pointer(&C.hg_epochs[tid])), e)
	}
}

// publishLocks stores a thread's lockset ids where the C fast path reads
// them (hg_locks: all locks in the low half, write-mode ones in the high
// half). Only the thread itself writes its entry.
func publishLocks(tid int32, held, writeHeld uint32) {
	if tid >= 0 && tid < C.HG_MAX_THREADS {
		atomic.StoreUint64((*uint64)(unsafe.Pointer(&C.hg_locks[tid])), uint64(held)|uint64(writeHeld)<<32)
	}
}

// publishShadow gives the C fast path the shadow directory.
func publishShadow(dir uintptr) {
	C.hg_set_shadow_dir(C.uintptr_t(dir))
}
