package main

/*
#include "hgrt.h"
*/
import "C"

import "hgrewrite/shadow"

// publishEpoch stores a thread's current epoch where the C fast path reads
// it. Only the thread itself writes its entry.
func publishEpoch(tid int32, e uint64) {
	if tid >= 0 && tid < C.HG_MAX_THREADS {
		C.hg_epochs[tid] = C.uint64_t(e)
	}
}

// publishShadow gives the C fast path the shadow directory.
func publishShadow(m *shadow.Memory) {
	C.hg_set_shadow_dir(C.uintptr_t(m.DirectoryBase()))
}
