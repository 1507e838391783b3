package main

/*
#include "hgrt.h"
*/
import "C"

import (
	"fmt"
	"os"
	"unsafe"

	"hgrewrite/runtime/hgopts"
	"hgrewrite/shadow"
)

// The functions below are the C side's calls into Go. Each arrives on the
// thread it is about, with that thread's re-entrancy guard up.

var opts = hgopts.Defaults()

//export hgGoInit
func hgGoInit(o *C.struct_hg_options) C.int {
	stderr = os.NewFile(uintptr(o.err_fd), "stderr")
	parsed, err := hgopts.Parse(os.Getenv("HG_OPTIONS"))
	if err != nil {
		fmt.Fprintf(stderr, "hgrewrite runtime: HG_OPTIONS: %v\n", err)
		return 1
	}
	opts = parsed
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
	d, err := newDetector(opts, bias)
	if err != nil {
		fmt.Fprintf(stderr, "hgrewrite runtime: cannot start race detection: %v\n", err)
		return -1
	}
	det = d
	publishShadow(d.mem)
	return d.newThread(nil, 0).tid
}

// hgGoFlush processes a batch of t's events; rec is the thread's C record
// (its region recording is read from there). It returns the number of
// reports waiting for the thread's call stack (hgGoStack).
//
//export hgGoFlush
func hgGoFlush(tid int32, ev *C.struct_hg_event, n C.uint32_t, rec *C.struct_hg_thread) C.int {
	d := det
	t := d.thread(tid)
	if t == nil || d.finished.Load() {
		return 0
	}
	t.rec = rec
	for _, e := range unsafe.Slice(ev, int(n)) {
		info := uint64(e.info)
		pc, size, flags := uint32(info), (info>>32)&0xffff, uint16(info>>48)
		addr := uint64(e.addr)
		if flags&(flagLock|flagUnlock) != 0 {
			if !d.opts.Lib {
				continue
			}
			mode := uint64(e.len)
			if flags&flagLock != 0 {
				d.lock(t, addr, mode&lockRead == 0)
			} else {
				d.unlock(t, addr)
			}
			switch {
			case flags&flagLock != 0 && mode&lockBeg != 0:
				t.cond.begin()
			case flags&flagUnlock != 0 && mode&lockEnd != 0:
				d.regionEnd(t, mode&lockCVM != 0)
			}
			continue
		}
		if flags&(flagHook|flagSignal|flagWaitDone) != 0 {
			if d.opts.Lib {
				switch {
				case flags&flagHook != 0:
					d.loopExit(t, addr)
				case flags&flagSignal != 0:
					d.signal(t, addr)
				default:
					d.waitDone(t, addr, e.len&waitInLoop != 0, e.len&waitWoke != 0)
				}
			}
			continue
		}
		if flags&(flagAlloc|flagFree) != 0 {
			d.heapEvent(t, addr, uint64(e.len), uint64(pc), flags)
			continue
		}
		if flags&flagAtomic != 0 {
			// Atomics are synchronisation, never races: before the
			// instruction, release onto the address; after it, acquire
			// what was released there (see patch.InfoPost).
			if flags&flagPost != 0 {
				d.acquire(t, addr)
			} else {
				d.release(t, addr)
			}
			continue
		}
		if e.len != 0 {
			size = uint64(e.len)
		}
		d.access(t, addr, size, pc, uint8(flags))
	}
	return C.int(d.rep.pendingCount(t))
}

// hgGoStack prints t's pending reports with the call stack the C side
// captured (return addresses, innermost first).
//
//export hgGoStack
func hgGoStack(tid int32, pcs *C.uint64_t, n C.int) {
	d := det
	t := d.thread(tid)
	if t == nil {
		return
	}
	stack := make([]uint64, int(n))
	for i, pc := range unsafe.Slice(pcs, int(n)) {
		stack[i] = uint64(pc)
	}
	d.rep.emit(t, stack)
}

//export hgGoThreadCreate
func hgGoThreadCreate(parent int32, ra uint64) int32 {
	d := det
	p := d.thread(parent)
	if p == nil {
		return -1
	}
	d.mu.Lock()
	full := len(d.threads) >= maxThreads
	d.mu.Unlock()
	if full {
		d.tooManyThreads.Do(func() {
			d.rep.print(fmt.Sprintf("hgrewrite: more than %d threads: threads created from now on are not checked\n", maxThreads))
		})
		return -1
	}
	c := d.newThread(p, d.linkPC(ra))
	d.tick(p)
	return c.tid
}

//export hgGoThreadHandle
func hgGoThreadHandle(tid int32, handle uint64) {
	det.mu.Lock()
	det.handles[handle] = tid
	det.mu.Unlock()
}

//export hgGoThreadExit
func hgGoThreadExit(tid int32) {
	d := det
	if t := d.thread(tid); t != nil {
		d.mu.Lock()
		t.exitVC = t.vc.Copy()
		d.mu.Unlock()
	}
}

//export hgGoThreadJoin
func hgGoThreadJoin(tid int32, handle uint64) {
	d := det
	t := d.thread(tid)
	d.mu.Lock()
	child, ok := d.handles[handle]
	delete(d.handles, handle)
	var vc *shadow.VC
	if ok && int(child) < len(d.threads) {
		c := d.threads[child]
		vc = c.exitVC
		if vc == nil {
			vc = c.vc
		}
	}
	if t != nil && vc != nil {
		t.vc.Join(vc)
	}
	d.mu.Unlock()
	if ok {
		// Join rule (ch. 5.1.2), applied lazily: cells whose threadset
		// loses its last other member return to exclusive when next
		// touched (detector.afterJoin).
		d.tsets.Kill(uint16(child))
	}
	if t != nil {
		d.tick(t)
	}
}

//export hgGoBarrierInit
func hgGoBarrierInit(addr, count uint64) {
	d := det
	if count == 0 {
		count = 1
	}
	d.mu.Lock()
	d.barriers[addr] = &barrier{count: count}
	d.mu.Unlock()
}

//export hgGoBarrierArrive
func hgGoBarrierArrive(tid int32, addr uint64) uint64 {
	d := det
	if t := d.thread(tid); t != nil && d.opts.Lib {
		return d.barrierArrive(t, addr)
	}
	return 0
}

//export hgGoBarrierLeave
func hgGoBarrierLeave(tid int32, addr, gen uint64) {
	d := det
	if t := d.thread(tid); t != nil && d.opts.Lib {
		d.barrierLeave(t, addr, gen)
	}
}

//export hgGoRelease
func hgGoRelease(tid int32, addr uint64) {
	d := det
	if t := d.thread(tid); t != nil && d.opts.Lib {
		d.release(t, addr)
	}
}

//export hgGoAcquire
func hgGoAcquire(tid int32, addr uint64) {
	d := det
	if t := d.thread(tid); t != nil && d.opts.Lib {
		d.acquire(t, addr)
	}
}

// hgGoFinish ends detection and prints the summary; it returns the number
// of races reported.
//
//export hgGoFinish
func hgGoFinish() C.int {
	d := det
	if d == nil || d.finished.Swap(true) {
		return 0
	}
	d.mu.Lock()
	threads := append([]*thread(nil), d.threads...)
	d.mu.Unlock()
	for _, t := range threads {
		d.rep.emit(t, nil) // reports still waiting for a stack
	}
	return C.int(d.rep.summary())
}

// linkPC turns a run-time code address into the main program's link-time
// address (what the symbolizer and the info words use), or 0 when it is
// not in the main program (a pthread_create call inside libstdc++).
func (d *detector) linkPC(ra uint64) uint64 {
	return uint64(C.hg_link_pc_addr(C.uint64_t(ra)))
}

// freeCheckBytes bounds the part of a released block that is checked as a
// write: freeing a large block would otherwise cost time in its size.
const freeCheckBytes = 4096

// hgGoFree handles a free (or delete) called by the program: the release is
// a write to the block (checked on its first freeCheckBytes), then the
// block's shadow is reset and the block forgotten.
//
//export hgGoFree
func hgGoFree(tid int32, addr, size, pc uint64) C.int {
	d := det
	t := d.thread(tid)
	if t == nil || d.finished.Load() {
		return 0
	}
	d.access(t, addr, min(size, freeCheckBytes), uint32(pc), flagWrite|accessFree)
	d.mem.Reset(addr, size)
	d.heap.remove(addr)
	return C.int(d.rep.pendingCount(t))
}

// heapEvent records an allocation or release for reports; the C side has
// reset the block's shadow already (runtime/malloc.c).
func (d *detector) heapEvent(t *thread, addr, size, pc uint64, flags uint16) {
	if flags&flagResetDone == 0 {
		d.mem.Reset(addr, size)
	}
	if flags&flagAlloc != 0 {
		d.heap.add(addr, size, pc, t.tid)
	} else {
		d.heap.remove(addr)
	}
}
