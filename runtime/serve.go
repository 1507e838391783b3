package main

/*
#include <stdlib.h>
#include "hgrt.h"
*/
import "C"

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"

	"hgrewrite/runtime/detect"
	"hgrewrite/shadow"
)

// A forked child's detector runs here, in a process of its own (the
// program file executed again with HG_SERVE set; runtime/remote.c starts
// it and explains why). hgGoServe answers the child's calls, one packet
// each, in order, until the child's end of the socket closes.

// server is the detector process's state: the child it serves and its
// detector.
type server struct {
	sock  int
	hello C.struct_hg_hello
	det   *detect.Detector
}

//export hgGoServe
func hgGoServe(sock, memfd C.int) {
	s := &server{sock: int(sock)}
	buf := make([]uint64, 1<<13) // 64 KiB: a full event buffer, its recording and the header
	raw := unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), len(buf)*8)
	for {
		n, err := unix.Read(s.sock, raw)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			return // the child has ended
		}
		if n < int(unsafe.Sizeof(C.struct_hg_req{})) {
			return
		}
		req := (*C.struct_hg_req)(unsafe.Pointer(&buf[0]))
		body := raw[unsafe.Sizeof(*req):n]
		if int(req.n1)+int(req.n2) > len(body) {
			return
		}
		ret := s.call(req, body[:req.n1], body[req.n1:req.n1+req.n2], int(memfd))
		s.reply(C.struct_hg_rep{ret: C.int64_t(ret)})
	}
}

func (s *server) reply(r C.struct_hg_rep) {
	b := unsafe.Slice((*byte)(unsafe.Pointer(&r)), unsafe.Sizeof(r))
	for {
		if _, err := unix.Write(s.sock, b); err != unix.EINTR {
			return
		}
	}
}

// call runs one request on the detector.
func (s *server) call(req *C.struct_hg_req, p1, p2 []byte, memfd int) int64 {
	tid, a := int32(req.tid), [3]uint64{uint64(req.a[0]), uint64(req.a[1]), uint64(req.a[2])}
	if req.op == C.HG_OP_HELLO {
		return int64(s.start(p1, memfd))
	}
	if s.det == nil {
		return 0
	}
	d := s.det
	switch req.op {
	case C.HG_OP_FLUSH:
		ev := unsafe.Slice((*detect.Event)(unsafe.Pointer(unsafe.SliceData(p1))), len(p1)/int(unsafe.Sizeof(detect.Event{})))
		var rec *recMsg
		if len(p2) == int(unsafe.Sizeof(recMsg{})) {
			rec = (*recMsg)(unsafe.Pointer(unsafe.SliceData(p2)))
		}
		return int64(d.Flush(tid, ev, rec))
	case C.HG_OP_STACK:
		d.Stack(tid, detect.StackOfPairs(words(p1)))
	case C.HG_OP_THREAD_CREATE:
		return int64(d.ThreadCreate(tid, words(p1)))
	case C.HG_OP_THREAD_NAME:
		threadName(d, tid, a[0], string(p1))
	case C.HG_OP_THREAD_HANDLE:
		d.ThreadHandle(tid, a[0])
	case C.HG_OP_THREAD_EXIT:
		d.ThreadExit(tid)
	case C.HG_OP_THREAD_JOIN:
		d.ThreadJoin(tid, a[0])
	case C.HG_OP_THREAD_DETACH:
		d.ThreadDetach(tid, a[0])
	case C.HG_OP_BARRIER_INIT:
		d.BarrierInit(a[0], a[1])
	case C.HG_OP_BARRIER_ARRIVE:
		return int64(d.BarrierArrive(tid, a[0]))
	case C.HG_OP_BARRIER_LEAVE:
		d.BarrierLeave(tid, a[0], a[1])
	case C.HG_OP_RELEASE:
		d.Release(tid, a[0])
	case C.HG_OP_ACQUIRE:
		d.Acquire(tid, a[0])
	case C.HG_OP_FINISH:
		return int64(d.Finish())
	case C.HG_OP_FREE:
		return int64(d.Free(tid, a[0], a[1], a[2]))
	case C.HG_OP_BENIGN:
		d.BenignRange(a[0], a[1], a[2] != 0)
	}
	return 0
}

// words copies a payload of 64-bit words (return addresses) out of the
// request buffer, which the next request overwrites.
func words(p []byte) []uint64 {
	w := make([]uint64, len(p)/8)
	if len(w) > 0 {
		copy(w, unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(p))), len(w)))
	}
	return w
}

// start maps the memory shared with the child and starts the detector;
// it returns the child's main thread id, or -1.
func (s *server) start(p []byte, memfd int) int32 {
	if s.det != nil || len(p) != int(unsafe.Sizeof(s.hello)) {
		return -1
	}
	s.hello = *(*C.struct_hg_hello)(unsafe.Pointer(unsafe.SliceData(p)))
	h := &s.hello
	arena, err := C.hg_serve_map(C.int(memfd), h.arena, h.arena_size)
	if arena == nil {
		fmt.Fprintf(stderr, "hgrewrite: pid %d: the detector process cannot map the shadow memory at %#x: %v\n", h.pid, h.arena, err)
		return -1
	}
	unix.Close(memfd)
	C.hg_set_log_pid(C.int(h.pid))
	mem, err := shadow.NewMemoryIn(arena, uintptr(h.arena_size))
	if err != nil {
		fmt.Fprintf(stderr, "hgrewrite: pid %d: %v\n", h.pid, err)
		return -1
	}
	d, err := detect.New(detect.Config{Options: opts, Bias: uint64(h.bias), Memory: mem, Pid: int(h.pid)}, childHost{s})
	if err != nil {
		fmt.Fprintf(stderr, "hgrewrite: pid %d: cannot start race detection: %v\n", h.pid, err)
		return -1
	}
	s.det = d
	return d.MainThread()
}

// childHost is detect.Host for a forked child's detector: epochs and
// locksets go to the shared arrays (mapped over this process's own), code
// addresses are the child's.
type childHost struct{ s *server }

var _ detect.Host = childHost{}

func (childHost) PublishEpoch(tid int32, epoch uint64) { publishEpoch(tid, epoch) }

func (childHost) PublishLocks(tid int32, held, writeHeld uint32) {
	publishLocks(tid, held, writeHeld)
}

// PublishThreadsetGen: the child's records learn no threadsets (KnowMember).
func (childHost) PublishThreadsetGen(uint32) {}

// ClockRow: the child's fast path sees no clocks of this process's.
func (childHost) ClockRow(int32) []uint64 { return nil }

// OwnerMoving: the child's threads name the cells they move in the rows
// this process shares with it (remote.c).
func (childHost) OwnerMoving(tid int32) (uintptr, bool) { return ownerMoving(tid) }

// PublishHandoffTable: nor its hand-off tables.
func (childHost) PublishHandoffTable(detect.HandoffTable, uintptr, uint) {}

// SnapshotAt, SnapshotsPushed: the child's C side publishes no region
// (runtime/regionpub.c), and its snapshot rings are its own memory.
func (childHost) SnapshotAt(uint16, uint64, *shadow.VC) (*shadow.VC, bool) { return nil, true }

func (childHost) SnapshotsPushed(uint16) uint64 { return 0 }

// ForgetLockPairs: the filter of lock pairs is the child's memory, which
// this process cannot reach: a mutex the child destroys and makes anew at
// the same address gets edges only for pairs of locks it has not met.
func (childHost) ForgetLockPairs()            {}
func (childHost) Print(s string)              { cHost{}.Print(s) }
func (childHost) Demangle(name string) string { return cHost{}.Demangle(name) }

// Halt answers the request being served with the order to exit; the
// child exits on reading it, and so does this process.
func (h childHost) Halt(code int) {
	h.s.reply(C.struct_hg_rep{halt: 1, code: C.int32_t(code)})
	unix.Exit(0)
}

func (h childHost) LinkPC(ra uint64) uint64 {
	c := &h.s.hello
	if ra >= uint64(c.main_lo) && ra < uint64(c.main_hi) {
		return ra - uint64(c.bias)
	}
	return 0
}

func (h childHost) InRuntime(ra uint64) bool {
	c := &h.s.hello
	return ra >= uint64(c.lib_lo) && ra < uint64(c.lib_hi)
}

// CallTrace: the child's call traces are in its own memory, which this
// process cannot read.
func (childHost) CallTrace(tid int32) []uint64 { return nil }

// recMsg is a flush's region recording as the child sent it.
type recMsg C.struct_hg_rec_msg

func (r *recMsg) Recorded(reads, writes []uint64) ([]uint64, []uint64, bool) {
	if r == nil {
		return reads, writes, false
	}
	reads = append(reads, unsafe.Slice((*uint64)(unsafe.Pointer(&r.rec_r[0])), min(int(r.nrec_r), C.HG_REC))...)
	writes = append(writes, unsafe.Slice((*uint64)(unsafe.Pointer(&r.rec_w[0])), min(int(r.nrec_w), C.HG_REC))...)
	return reads, writes, r.rec_r_all != 0
}

// KnowMember: the child's record is the child's memory, out of reach; its
// fast path leaves shared locations to this process.
func (r *recMsg) KnowMember(id, gen uint32) {}

func (r *recMsg) KnowOverflow(detect.HandoffTable, uint64) {}

// KnowJoin and TakeCMade: the child publishes no region in C
// (runtime/regionpub.c).
func (r *recMsg) KnowJoin(uint64) {}

func (r *recMsg) TakeCMade(buf []uint32, all bool) []uint32 { return buf }

func (r *recMsg) KnowSnapshot(*shadow.VC) {}

// KnowAcquired: the child's atomics always come here (runtime/fastpath.c,
// hg_acquire_known), since this process does not write its stamps.
func (r *recMsg) KnowAcquired(uint64, uint64, uint64) {}

// NoteLockStep: the child's lock views learn no transitions (the cache
// is the child's memory), so they follow its locksets from flush to flush.
func (r *recMsg) NoteLockStep(uint64, uint64, detect.LockStep) {}
