package detect

import (
	"strings"
	"sync"
	"testing"

	"hgrewrite/abi"
	"hgrewrite/runtime/hgopts"
	"hgrewrite/shadow"
)

// This file is the test bench: a fake Host that keeps what the detector
// prints, a fake Region per thread, and event builders. Tests drive the
// Detector as the C side would: create threads, flush batches of events on
// each thread, join, finish; then read the reports.

type fakeHost struct {
	mu      sync.Mutex
	epochs  map[int32]uint64
	out     strings.Builder
	halted  bool
	haltErr int
	forgets int                     // ForgetLockPairs calls
	traces  map[int32][]uint64      // CallTrace's answers
	moving  func(tid int32) uintptr // OwnerMoving's answers (nil: cannot tell)
	snaps   snapRings               // SnapshotAt's answers
}

// snapRings are the threads' snapshot rings as the C side pushes them
// (runtime/regionpub.c, hg_snap_push) and reads them (hg_snap_at): each
// id's last snapRingLen entries, oldest first.
type snapRings struct {
	mu    sync.Mutex
	rings map[uint16][]fakeSnap
	count map[uint16]uint64
}

type fakeSnap struct {
	from uint64
	vc   *shadow.VC
}

const snapRingLen = 16

// push makes vc thread tid's clock from its clock `from` on.
func (r *snapRings) push(tid uint16, from uint64, vc *shadow.VC) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.rings == nil {
		r.rings, r.count = map[uint16][]fakeSnap{}, map[uint16]uint64{}
	}
	ring := append(r.rings[tid], fakeSnap{from, vc.Copy()})
	r.rings[tid] = ring[max(0, len(ring)-snapRingLen):]
	r.count[tid]++
}

// at is hg_snap_at: the newest entry from at most clock, else the
// oldest; its own component clock (have is not used).
func (r *snapRings) at(tid uint16, clock uint64, have *shadow.VC) *shadow.VC {
	r.mu.Lock()
	defer r.mu.Unlock()
	ring := r.rings[tid]
	if len(ring) == 0 {
		return nil
	}
	pick := 0
	for i := len(ring) - 1; i >= 0; i-- {
		if pick = i; ring[i].from <= clock {
			break
		}
	}
	vc := ring[pick].vc.Copy()
	vc.Set(tid, clock)
	return vc
}

func (h *fakeHost) SnapshotAt(tid uint16, clock uint64, have *shadow.VC) (*shadow.VC, bool) {
	return h.snaps.at(tid, clock, have), true
}

func (h *fakeHost) SnapshotsPushed(tid uint16) uint64 {
	h.snaps.mu.Lock()
	defer h.snaps.mu.Unlock()
	return h.snaps.count[tid]
}

func (h *fakeHost) PublishEpoch(tid int32, e uint64) {
	h.mu.Lock()
	h.epochs[tid] = e
	h.mu.Unlock()
}

func (h *fakeHost) PublishLocks(tid int32, held, writeHeld uint32) {}

func (h *fakeHost) PublishThreadsetGen(gen uint32) {}

func (h *fakeHost) ForgetLockPairs() {
	h.mu.Lock()
	h.forgets++
	h.mu.Unlock()
}

func (h *fakeHost) ClockRow(tid int32) []uint64 { return nil }

// OwnerMoving answers as moving says, if set; else the host cannot tell.
func (h *fakeHost) OwnerMoving(tid int32) (uintptr, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.moving == nil {
		return 0, false
	}
	return h.moving(tid), true
}

func (h *fakeHost) CallTrace(tid int32) []uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.traces[tid]
}

func (h *fakeHost) PublishHandoffTable(table HandoffTable, keys uintptr, bits uint) {}

func (h *fakeHost) Print(s string) {
	h.mu.Lock()
	h.out.WriteString(s)
	h.mu.Unlock()
}

func (h *fakeHost) Halt(code int) {
	h.mu.Lock()
	h.halted, h.haltErr = true, code
	h.mu.Unlock()
}

func (h *fakeHost) Demangle(name string) string { return "demangled:" + name }

// LinkPC: code addresses are link-time addresses already.
func (h *fakeHost) LinkPC(ra uint64) uint64 { return ra }

// InRuntime: code addresses from runtimeCode up are the runtime library's.
func (h *fakeHost) InRuntime(ra uint64) bool { return ra >= runtimeCode }

const runtimeCode = 0x7f000000

func (h *fakeHost) output() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.out.String()
}

// fakeRegion is a thread's C record: its region recording, and the
// ways a test wrote as the C side would (cmade, TakeCMade; cmadeLater:
// they are given only to a take of all, as while the list and the ring
// are less than half full).
type fakeRegion struct {
	reads, writes []uint64
	readsAll      bool
	cmade         []fakeWay
	cmadeLater    bool
	acquired      map[uint64]uint64 // KnowAcquired's last stamp per object
	exact         map[uint64]uint64 // ... and its exact clock
}

type fakeWay struct {
	table HandoffTable
	way   uint32
}

func (r *fakeRegion) Recorded(reads, writes []uint64) ([]uint64, []uint64, bool) {
	return append(reads, r.reads...), append(writes, r.writes...), r.readsAll
}

func (r *fakeRegion) KnowMember(id, gen uint32) {}

func (r *fakeRegion) KnowOverflow(table HandoffTable, id uint64) {}

func (r *fakeRegion) KnowJoin(clock uint64) {}

func (r *fakeRegion) NoteLockStep(before, after uint64, step LockStep) {}

func (r *fakeRegion) KnowAcquired(obj, stamp, exact uint64) {
	if r.acquired == nil {
		r.acquired, r.exact = map[uint64]uint64{}, map[uint64]uint64{}
	}
	r.acquired[obj], r.exact[obj] = stamp, exact
}

func (r *fakeRegion) KnowSnapshot(vc *shadow.VC) {}

func (r *fakeRegion) TakeCMade(buf []uint32, all bool) []uint32 {
	if r.cmadeLater && !all {
		return buf
	}
	for _, w := range r.cmade {
		buf = append(buf, uint32(w.table)<<31|w.way)
	}
	r.cmade = r.cmade[:0]
	return buf
}

// bench is one detector under test.
type bench struct {
	t       testing.TB
	d       *Detector
	host    *fakeHost
	regions map[int32]*fakeRegion
	mu      sync.Mutex
}

// newBench starts a detector with HG_OPTIONS options.
func newBench(t testing.TB, options string) *bench {
	t.Helper()
	o, err := hgopts.Parse(options)
	if err != nil {
		t.Fatal(err)
	}
	h := &fakeHost{epochs: map[int32]uint64{}}
	d, err := New(Config{Options: o, Exe: "/nonexistent/program"}, h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	b := &bench{t: t, d: d, host: h, regions: map[int32]*fakeRegion{}}
	if tid := d.MainThread(); tid != 0 {
		t.Fatalf("main thread is T%d", tid)
	}
	return b
}

// region is tid's recording, which a test sets before a flush.
func (b *bench) region(tid int32) *fakeRegion {
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.regions[tid]
	if r == nil {
		r = new(fakeRegion)
		b.regions[tid] = r
	}
	return r
}

// create makes parent create a thread from a pthread_create call whose
// return address is ra (run-time and link-time addresses are one here:
// fakeHost.LinkPC); reports name the call at ra-1. The thread's
// pthread_t is its tid + handleBase.
func (b *bench) create(parent int32, ra uint64) int32 {
	b.t.Helper()
	c := b.d.ThreadCreate(parent, []uint64{ra})
	if c < 0 {
		b.t.Fatalf("ThreadCreate(T%d) failed", parent)
	}
	b.d.ThreadHandle(c, uint64(c)+handleBase)
	return c
}

const handleBase = 0x1000

// exitJoin ends child and makes tid join it.
func (b *bench) exitJoin(tid, child int32) {
	b.d.ThreadExit(child)
	b.d.ThreadJoin(tid, uint64(child)+handleBase)
}

// flush hands tid's events over and returns the pending report count.
func (b *bench) flush(tid int32, ev ...Event) int {
	return b.d.Flush(tid, ev, b.region(tid))
}

// finish ends detection: the number of races and everything printed.
func (b *bench) finish() (int, string) {
	n := b.d.Finish()
	return n, b.host.output()
}

// Event builders: the info words the C side hands over.

func rd(addr uint64, size uint16, pc uint32) Event {
	return Event{Addr: addr, Info: abi.Info(uint64(pc), size, abi.Read)}
}

func wr(addr uint64, size uint16, pc uint32) Event {
	return Event{Addr: addr, Info: abi.Info(uint64(pc), size, abi.Write)}
}

func ev(addr uint64, flags uint16, arg uint64) Event {
	return Event{Addr: addr, Info: abi.Info(0, 0, flags), Len: arg}
}

func lock(m uint64, mode uint64) Event   { return ev(m, abi.Lock, mode) }
func unlock(m uint64, mode uint64) Event { return ev(m, abi.Unlock, mode) }
func signal(cv uint64) Event             { return ev(cv, abi.Signal, 0) }
func waitDone(cv uint64, bits uint64) Event {
	return ev(cv, abi.WaitDone, bits)
}

// loopExit is the exit hook of a wait loop whose condition variable the
// rewriter recovered as cv.
func loopExit(cv uint64) Event {
	return Event{Addr: cv, Info: abi.Info(0, abi.HookExit, abi.Hook)}
}

func alloc(addr, size uint64, pc uint32) Event {
	return Event{Addr: addr, Info: abi.Info(uint64(pc), 0, abi.Alloc|abi.ResetDone), Len: size}
}

// spinStore and spinLoad are the events of a counterpart write (release
// before it) and a spinning-read loop's condition load (acquire after it).
func spinStore(addr uint64, pc uint32) Event {
	return Event{Addr: addr, Info: abi.Info(uint64(pc), 4, abi.Write|abi.Atomic|abi.Spin)}
}

func spinLoad(addr uint64, pc uint32) Event {
	return Event{Addr: addr, Info: abi.Info(uint64(pc), 4, abi.Read|abi.Atomic|abi.Spin|abi.Post)}
}

// wantReports checks the number of races and that out contains every
// string of want.
func wantReports(t *testing.T, races int, out string, n int, want ...string) {
	t.Helper()
	if races != n {
		t.Errorf("%d races reported, want %d; output:\n%s", races, n, out)
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q; output:\n%s", w, out)
		}
	}
}
