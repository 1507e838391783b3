package main

/*
#include <stdlib.h>
#include "hgrt.h"
*/
import "C"

import (
	"unsafe"

	"hgrewrite/abi"
	"hgrewrite/runtime/detect"
	"hgrewrite/shadow"
)

// cHost implements detect.Host over the C runtime.
type cHost struct{}

var _ detect.Host = cHost{}

func (cHost) PublishEpoch(tid int32, epoch uint64) { publishEpoch(tid, epoch) }

func (cHost) PublishLocks(tid int32, held, writeHeld uint32) { publishLocks(tid, held, writeHeld) }

func (cHost) PublishThreadsetGen(gen uint32) { publishThreadsetGen(gen) }

func (cHost) PublishHandoffTable(table detect.HandoffTable, keys uintptr, bits uint) {
	C.hg_publish_handoff(C.int(table), C.uintptr_t(keys), C.uint32_t(bits))
}

func (cHost) ClockRow(tid int32) []uint64 {
	p := C.hg_clock_row(C.int32_t(tid))
	if p == nil {
		return nil
	}
	return unsafe.Slice((*uint64)(unsafe.Pointer(p)), C.HG_MAX_THREADS)
}

func (cHost) OwnerMoving(tid int32) (uintptr, bool) { return ownerMoving(tid) }

func (cHost) SnapshotAt(tid uint16, clock uint64, have *shadow.VC) (*shadow.VC, bool) {
	return snapshotAt(tid, clock, have)
}

func (cHost) SnapshotsPushed(tid uint16) uint64 { return snapshotsPushed(tid) }

func (cHost) Print(s string) {
	cs := C.CString(s)
	C.hg_print(cs)
	C.free(unsafe.Pointer(cs))
}

func (cHost) Halt(code int) { C.hg_halt(C.int(code)) }

// Demangle uses libstdc++'s demangler if the program has it loaded
// (runtime/demangle.c).
func (cHost) Demangle(name string) string {
	out := name
	cs := C.CString(name)
	if d := C.hg_demangle(cs); d != nil {
		out = C.GoString(d)
		C.free(unsafe.Pointer(d))
	}
	C.free(unsafe.Pointer(cs))
	return out
}

// LinkPC turns a run-time code address into the main program's link-time
// address (what the symbolizer and the info words use), or 0 when it is
// not in the main program (a pthread_create call inside libstdc++).
func (cHost) LinkPC(ra uint64) uint64 { return uint64(C.hg_link_pc_addr(C.uint64_t(ra))) }

func (cHost) InRuntime(ra uint64) bool { return C.hg_in_runtime(C.uint64_t(ra)) != 0 }

func (cHost) CallTrace(tid int32) []uint64 {
	buf := make([]uint64, abi.TraceBytes/8)
	return buf[:C.hg_trace_copy(C.int32_t(tid), (*C.uint64_t)(unsafe.Pointer(&buf[0])))]
}

func (cHost) ForgetLockPairs() { C.hg_lockorder_forget() }

// cRecord is a thread's C record (struct hg_thread), whose lock-protected
// region recording (rec_r/rec_w) the detector reads as a detect.Region.
type cRecord C.struct_hg_thread

// Recorded copies the recording. It reads the record directly: a call
// into C from here would cost a system-call transition of the Go
// scheduler.
func (r *cRecord) Recorded(reads, writes []uint64) ([]uint64, []uint64, bool) {
	if r == nil {
		return reads, writes, false
	}
	reads = append(reads, unsafe.Slice((*uint64)(unsafe.Pointer(&r.rec_r[0])), int(r.nrec_r))...)
	writes = append(writes, unsafe.Slice((*uint64)(unsafe.Pointer(&r.rec_w[0])), int(r.nrec_w))...)
	return reads, writes, r.rec_r_all != 0
}

// KnowMember fills the record's cache of threadsets that hold its thread
// (hgrt.h, tsets), read by the fast path. The Know methods run on the
// record's thread, whose C side reads what they write after the call
// into Go returns: plain stores (publishEpoch).
func (r *cRecord) KnowMember(id, gen uint32) {
	if r == nil {
		return
	}
	r.tsets[id&(C.HG_TSETS-1)] = C.uint64_t(uint64(gen)<<32 | uint64(id))
}

// KnowJoin notes in the record the thread's clock at its latest join
// (hgrt.h, joined_at). Only the thread's own calls write it.
func (r *cRecord) KnowJoin(clock uint64) {
	if r != nil {
		r.joined_at = C.uint64_t(clock)
	}
}

// KnowAcquired notes in the record the release stamp of obj that the
// thread's clock holds, and whether it holds obj's clock exactly (hgrt.h,
// acq). Only the thread's own calls write it.
func (r *cRecord) KnowAcquired(obj, stamp, exact uint64) {
	if r != nil {
		a := &r.acq[obj>>3%C.HG_SYNC_KNOWN]
		a.obj, a.stamp, a.exact = C.uint64_t(obj), C.uint64_t(stamp), C.uint64_t(exact)
	}
}

// KnowSnapshot pushes the thread's clock snapshot onto its snapshot ring
// (pushSnapshot, or hg_snap_push_go, which makes the ring). Only the
// thread's own calls push, once the ways the C side wrote are
// materialized (thread.snapshot).
func (r *cRecord) KnowSnapshot(vc *shadow.VC) {
	if r == nil || vc.Len() == 0 {
		return
	}
	c := vc.Components()
	if !pushSnapshot(uint16(r.tid), c) {
		C.hg_snap_push_go((*C.struct_hg_thread)(r), C.uint64_t(c[min(int(r.tid), len(c)-1)]), (*C.uint64_t)(unsafe.Pointer(&c[0])), C.uint64_t(len(c)))
	}
}

// TakeCMade hands over and forgets the hand-off table ways the C side
// wrote with their clock in the thread's snapshot ring (hgrt.h, cmade),
// with all or once the list or the ring since the last take (snap_keep)
// is half full, and keeps the ring's newest entry from now on, which the
// ways the C side writes next may name. Only the thread's own calls read
// and write them.
func (r *cRecord) TakeCMade(buf []uint32, all bool) []uint32 {
	if r == nil || r.ncmade == 0 {
		return buf
	}
	pushed := snapshotsPushed(uint16(r.tid))
	if !all && int(r.ncmade) < len(r.cmade)/2 && pushed-uint64(r.snap_keep) < C.HG_SNAPS/2 {
		return buf
	}
	n := min(int(r.ncmade), len(r.cmade))
	for _, w := range r.cmade[:n] {
		buf = append(buf, uint32(w))
	}
	r.ncmade = 0
	r.snap_keep = C.uint64_t(max(pushed, 1) - 1)
	return buf
}

// KnowOverflow notes in the record the overflow segment of a hand-off
// table that its thread knows (hgrt.h, over_known).
func (r *cRecord) KnowOverflow(table detect.HandoffTable, id uint64) {
	if r == nil || table < 0 || int(table) >= len(r.over_known) {
		return
	}
	r.over_known[table] = C.uint64_t(id)
}

// NoteLockStep queues the transition in the record, where the C side
// takes it into the lock view's cache when the flush returns
// (runtime/lockview.c, hg_lkc_drain); a call into C from here would cost
// a system-call transition of the Go scheduler, twice per lock-protected
// region. A flush with more transitions than the queue holds makes the
// call.
func (r *cRecord) NoteLockStep(before, after uint64, step detect.LockStep) {
	if r == nil {
		return
	}
	if n := r.nlkc_q; n < C.HG_LKC_Q {
		r.lkc_q[n] = C.struct_hg_lkc_step{before: C.uint64_t(before), after: C.uint64_t(after),
			mutex: C.uint64_t(step.Mutex), op: C.uint64_t(step.Op)}
		r.nlkc_q = n + 1
		return
	}
	C.hg_lkc_note(r.tid, C.uint64_t(before), C.uint64_t(after), C.uint64_t(step.Mutex), C.uint32_t(step.Op))
}
