package main

/*
#include "hgrt.h"
*/
import "C"

import (
	"fmt"
	"os"
	"runtime/debug"
	"unsafe"

	"hgrewrite/runtime/detect"
	"hgrewrite/runtime/hgopts"
)

// The functions below are the C side's calls into Go. Each arrives on the
// thread it is about, with that thread's re-entrancy guard up; they
// forward to the detector (package detect), whose threading rules they
// follow.

var (
	opts = hgopts.Defaults()
	det  *detect.Detector // set by hgGoMainThread
)

//export hgGoInit
func hgGoInit(o *C.struct_hg_options) C.int {
	stderr = os.NewFile(uintptr(o.err_fd), "stderr")
	parsed, err := hgopts.Parse(os.Getenv("HG_OPTIONS"))
	if err != nil {
		fmt.Fprintf(stderr, "hgrewrite runtime: HG_OPTIONS: %v\n", err)
		return 1
	}
	opts = parsed
	if opts.Suppressions != "" {
		if err := detect.CheckSuppressions(opts.Suppressions); err != nil {
			fmt.Fprintf(stderr, "hgrewrite runtime: HG_OPTIONS: %v\n", err)
			return 1
		}
	}
	if len(opts.LogPath) >= len(o.log_path) {
		fmt.Fprintf(stderr, "hgrewrite runtime: HG_OPTIONS: log_path is longer than %d bytes\n", len(o.log_path)-1)
		return 1
	}
	for i := 0; i < len(opts.LogPath); i++ {
		o.log_path[i] = C.char(opts.LogPath[i])
	}
	o.stats = cbool(opts.Stats)
	o.verbosity = C.int(opts.Verbosity)
	o.detect = cbool(opts.Detect)
	o.exitcode = C.int(opts.ExitCode)
	o.lsd = C.int(map[string]int{"no": 0, "yes": 1, "wr": 2}[opts.LSD])
	o.spin = cbool(opts.Spin)
	o.handoff = cbool(opts.Handoff && opts.Lib)
	o.deadlocks = cbool(opts.Deadlocks && opts.Lib)
	if os.Getenv("GOGC") == "" {
		// The detector's heap is mostly the hand-off tables' segments,
		// short-lived and small: collecting at half the default growth
		// takes a sixth off a lock-heavy program's peak memory (locks.c:
		// 51 -> 43.5 MB) for no time that shows.
		debug.SetGCPercent(50)
	}
	procs.start()
	startProfiles()
	return 0
}

func cbool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// hgGoMainThread starts the detector; the caller becomes thread 0.
//
//export hgGoMainThread
func hgGoMainThread(bias uint64) int32 {
	mirror := unsafe.Slice((*uint64)(unsafe.Pointer(&C.hg_lsm[0])), C.HG_LSM_IDS*C.SH_LOCKSET_MIRROR_WORDS)
	d, err := detect.New(detect.Config{Options: opts, Bias: bias, LocksetMirror: mirror}, cHost{})
	if err != nil {
		fmt.Fprintf(stderr, "hgrewrite runtime: cannot start race detection: %v\n", err)
		return -1
	}
	det = d
	publishShadow(d.ShadowBase(), d.SplitBase())
	return d.MainThread()
}

// The C event buffer is handed over as it is.
var _ [unsafe.Sizeof(detect.Event{}) - unsafe.Sizeof(C.struct_hg_event{})]byte
var _ [unsafe.Sizeof(C.struct_hg_event{}) - unsafe.Sizeof(detect.Event{})]byte

// hgGoFlush processes a batch of t's events; rec is the thread's C record
// (its region recording is read from there). It returns the number of
// reports waiting for the thread's call stack (hgGoStack).
//
//export hgGoFlush
func hgGoFlush(tid int32, ev *C.struct_hg_event, n C.uint32_t, rec *C.struct_hg_thread) C.int {
	events := unsafe.Slice((*detect.Event)(unsafe.Pointer(ev)), int(n))
	procs.called(tid)
	return C.int(det.Flush(tid, events, (*cRecord)(rec)))
}

// hgGoStack prints t's pending reports with the call stack the C side
// captured: n (return address, stack pointer) pairs, innermost first.
//
//export hgGoStack
func hgGoStack(tid int32, frames *C.uint64_t, n C.int) {
	det.Stack(tid, detect.StackOfPairs(goStack(frames, 2*n)))
}

// hgGoThreadCreate registers a thread parent creates; stack is the
// creator's call stack in the pthread_create wrapper (run-time return
// addresses, innermost first).
//
//export hgGoThreadCreate
func hgGoThreadCreate(parent int32, stack *C.uint64_t, n C.int) int32 {
	tid := det.ThreadCreate(parent, goStack(stack, n))
	procs.threadStarts(tid)
	return tid
}

// goStack copies a call stack the C side captured.
func goStack(pcs *C.uint64_t, n C.int) []uint64 {
	stack := make([]uint64, int(n))
	for i, pc := range unsafe.Slice(pcs, int(n)) {
		stack[i] = uint64(pc)
	}
	return stack
}

// hgGoThreadName: a thread was named; tid < 0 when a thread named another
// one, known by its pthread_t.
//
//export hgGoThreadName
func hgGoThreadName(tid int32, handle uint64, name *C.char) {
	threadName(det, tid, handle, C.GoString(name))
}

// threadName records a thread's name, finding it by its pthread_t when
// tid < 0 (a thread the detector does not know keeps no name).
func threadName(d *detect.Detector, tid int32, handle uint64, name string) {
	if tid < 0 {
		tid = d.HandleThread(handle)
	}
	d.ThreadName(tid, name)
}

//export hgGoThreadHandle
func hgGoThreadHandle(tid int32, handle uint64) { det.ThreadHandle(tid, handle) }

//export hgGoThreadExit
func hgGoThreadExit(tid int32) {
	det.ThreadExit(tid)
	procs.threadEnds(tid)
}

//export hgGoThreadDetach
func hgGoThreadDetach(tid int32, handle uint64) { det.ThreadDetach(tid, handle) }

//export hgGoThreadJoin
func hgGoThreadJoin(tid int32, handle uint64) { det.ThreadJoin(tid, handle) }

//export hgGoBarrierInit
func hgGoBarrierInit(addr, count uint64) { det.BarrierInit(addr, count) }

//export hgGoBarrierArrive
func hgGoBarrierArrive(tid int32, addr uint64) uint64 { return det.BarrierArrive(tid, addr) }

//export hgGoBarrierLeave
func hgGoBarrierLeave(tid int32, addr, gen uint64) { det.BarrierLeave(tid, addr, gen) }

//export hgGoRelease
func hgGoRelease(tid int32, addr uint64) { det.Release(tid, addr) }

//export hgGoAcquire
func hgGoAcquire(tid int32, addr uint64) { det.Acquire(tid, addr) }

// hgGoBenign declares [addr, addr+size) racy on purpose, or withdraws
// the declaration (runtime/annotations.c).
//
//export hgGoBenign
func hgGoBenign(addr, size uint64, on C.int) { det.BenignRange(addr, size, on != 0) }

// hgGoFinish ends detection and prints the summary; it returns the number
// of races reported.
//
//export hgGoFinish
func hgGoFinish() C.int {
	if det == nil {
		return 0
	}
	writeProfiles()
	return C.int(det.Finish())
}

// hgGoFree handles a free (or delete) called by the program: the release is
// a write to the block, then the block's shadow is reset (detect.Free).
//
//export hgGoFree
func hgGoFree(tid int32, addr, size, pc uint64) C.int {
	return C.int(det.Free(tid, addr, size, pc))
}
