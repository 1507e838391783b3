package detect

import (
	"hgrewrite/runtime/hgopts"
	"hgrewrite/shadow"
)

// Host is what the detector needs from the runtime's C side. The runtime
// library implements it over the C runtime (runtime/host.go); tests use a
// fake. Methods may be called from any program thread, concurrently, unless
// their comment says otherwise; none may call back into the Detector (some
// run under its locks), and none may block on another program thread.
type Host interface {
	// PublishEpoch stores thread tid's current epoch (a cell epoch:
	// shadow.CellEpoch) where the C fast path reads it. It is called by
	// thread tid itself whenever it starts a new segment, and once by its
	// creator (ThreadCreate, with the detector's table lock held) before
	// tid runs; never for one tid from two threads at once.
	PublishEpoch(tid int32, epoch uint64)
	// PublishLocks stores the lockset ids thread tid holds (all its locks,
	// and those held in write mode) where the C fast path reads them: it
	// keeps an exclusive location's owner lockset (msm, choice 13) without
	// the Go side while it does not change. Called by thread tid itself
	// whenever they change; a new thread starts with both empty (0).
	PublishLocks(tid int32, held, writeHeld uint32)
	// PublishThreadsetGen stores the threadsets' generation
	// (shadow.Threadsets.Generation) where the C fast path reads it: the
	// threadsets a Region was told its thread belongs to (KnowMember)
	// hold only while it stays the same. Called after every change.
	PublishThreadsetGen(gen uint32)
	// ClockRow is where thread tid's vector clock is mirrored for the C
	// fast path (abi.MaxThreads entries, zero beyond what the detector
	// writes), or nil: the fast path then leaves every location another
	// thread owns to the Go side. Called when the thread is created; the
	// row is tid's, also for a later thread under the same id.
	ClockRow(tid int32) []uint64
	// OwnerMoving is the address of the cell thread tid's fast path is
	// moving to the thread's new segment now (0: none), between its
	// change of the state and its store of the history; ok is false when
	// the host cannot tell (a step then waits a bounded time: ownerLags).
	OwnerMoving(tid int32) (cell uintptr, ok bool)
	// SnapshotAt is the clock of the hand-off ways that thread tid's C
	// side wrote at its clock `clock` (runtime/regionpub.c: they keep
	// their clock in the thread's snapshot ring), a copy, or have if
	// that is the clock already (nil: no such hint); ok is false when
	// the ring changed under the read (read again), vc nil when tid has
	// no ring. The thread's own component is at most clock.
	SnapshotAt(tid uint16, clock uint64, have *shadow.VC) (vc *shadow.VC, ok bool)
	// SnapshotsPushed is how many entries the snapshot ring of thread id
	// tid took, for all the threads that had the id (0: none, and so no
	// way the C side wrote names the id).
	SnapshotsPushed(tid uint16) uint64
	// PublishHandoffTable tells the C fast path where a hand-off table's
	// keys are (segtable.go, handoffMemory: 64 bytes whose first 24 hold
	// what the C side reads of the overflow segment, overHead, then
	// 1<<bits slots of segWays ways, each a key and an epoch), once the
	// table is made: a lock-protected
	// region's access whose variable no segment the thread does not know
	// was published for stays in C.
	PublishHandoffTable(table HandoffTable, keys uintptr, bits uint)
	// Print writes one report or message (possibly several lines, each
	// ending in a newline) to the runtime's output, whole: lines of
	// concurrent calls must not interleave. It may be called with the
	// reporter's lock held.
	Print(s string)
	// Halt ends the process now with the exit status code, after
	// flushing the program's stdio (halt_on_error). It does not return.
	// It is called with the reporter's lock held.
	Halt(code int)
	// Demangle returns the source form of a C++ symbol name (one that
	// starts with "_Z"), or name itself when it cannot. It is called
	// under the symbolizer's lock (and often the reporter's), so it need
	// not be reentrant.
	Demangle(name string) string
	// LinkPC turns a run-time code address into the main program's
	// link-time address, 0 when it is not in the main program.
	LinkPC(ra uint64) uint64
	// InRuntime reports whether a code address is in the runtime library
	// itself (its frames are dropped from reported stacks).
	InRuntime(ra uint64) bool
	// CallTrace copies thread tid's call trace (abi, "The call trace"):
	// its words, oldest entry first, or nil when there is none to read
	// (a forked child's detector, a program rewritten with
	// --no-call-trace gives an empty one). It may be called with the
	// reporter's lock held.
	CallTrace(tid int32) []uint64
	// ForgetLockPairs tells the C side that edges of the lock-order graph
	// were dropped (a mutex destroyed, or the heap block holding it
	// released): its filter of the pairs of mutexes seen
	// (runtime/lockorder.c) must forget them, so that locks of a new
	// mutex at the same address make edges again. It may forget more
	// (all of them). Called by the thread whose event dropped them,
	// under no detector lock.
	ForgetLockPairs()
}

// Region is one thread's recording of its current lock-protected region
// (dissertation ch. 6): the addresses it read and wrote since its outermost
// lock, kept by the C side (the thread's C record) so that those accesses
// keep the fast path. A Region is passed with each Flush and used only
// during it, on the thread it belongs to.
type Region interface {
	// Recorded appends the region's recorded reads and writes (writes stop
	// being recorded at a signal) to reads and writes and returns them,
	// and whether the region read more distinct addresses than it recorded
	// (its reads then stand for every variable).
	Recorded(reads, writes []uint64) ([]uint64, []uint64, bool)
	// KnowMember tells the thread's fast path that threadset id holds
	// the thread, as the threadsets were in generation gen: the fast
	// path then leaves a shared location that the thread's access would
	// not change alone (runtime/fastpath.c).
	KnowMember(id, gen uint32)
	// KnowOverflow tells the thread's fast path that the thread knows
	// the overflow segment id of a hand-off table (a look-up that finds
	// no entry of its own would join it).
	KnowOverflow(table HandoffTable, id uint64)
	// KnowJoin tells the thread's fast path that the thread's vector
	// clock took in another at its own clock value clock (a join), or may
	// have before (the Go side's first sight of the thread): a reader-log
	// way the thread published at a clock up to that one no longer holds
	// the thread's clock (runtime/regionpub.c).
	KnowJoin(clock uint64)
	// NoteLockStep tells the thread's fast path that a lock operation
	// (step) took the thread's lockset ids (PublishLocks: held in the
	// low half, write-mode ones in the high half) from before to after:
	// it follows them across the same operation next time, before the
	// Go side has processed it (runtime/lockview.c).
	NoteLockStep(before, after uint64, step LockStep)
	// KnowAcquired tells the thread's fast path that the thread's clock
	// holds everything released on the synchronisation object at obj up
	// to the release stamp stamp (syncClocks): while the object's stamp
	// stays, an atomic instruction's acquire of it needs no call into Go
	// (runtime/fastpath.c, hg_acquire_known). exact, if not 0, is the
	// thread's own clock when its clock became the object's but for that
	// component: until the thread joins another clock, the fast path may
	// release on the object itself (hg_release_known). Entries are
	// direct-mapped by (obj >> 3) mod abi.SyncKnown.
	KnowAcquired(obj, stamp, exact uint64)
	// KnowSnapshot tells the thread's fast path of the clock snapshot
	// the thread's segments are published under now (thread.snapshot):
	// its thread's snapshot ring takes it, and regions the fast path
	// publishes until the thread's next join name it. Called once every
	// way the fast path wrote was taken (TakeCMade with all).
	KnowSnapshot(vc *shadow.VC)
	// TakeCMade appends to buf the hand-off table ways the fast path
	// wrote for the thread since they were last taken (table << 31 |
	// way), with their clock in the thread's snapshot ring
	// (Host.SnapshotAt), forgets them, and returns buf: with all, every
	// one; else only once the list or the ring is half full. Until they
	// are taken, the ring keeps every entry they may name.
	TakeCMade(buf []uint32, all bool) []uint32
}

// HandoffInHeap is the address PublishHandoffTable gives for a table
// whose memory could not be mapped outside the Go heap: the C fast path
// cannot read it and must take every look-up there as news (the Go side
// decides).
const HandoffInHeap = 1

// HandoffTable names the tables the C fast path reads: the hand-off
// tables, and the release stamps of synchronisation objects.
type HandoffTable int

const (
	HandoffWrites HandoffTable = iota // wrSegs: published writes, looked up by reads
	HandoffReads                      // readLog: published reads, looked up by writes
	SyncStamps                        // syncClocks: a stamp per release, looked up by atomics' acquires
)

// Event is one buffered event of a thread, laid out as the C side's struct
// hg_event: an access (Info is an abi.Info word, Len the byte length of a
// string-instruction range or 0) or a non-access event (abi.Lock,
// abi.Unlock, abi.Alloc, abi.Free, abi.Hook, abi.Signal, abi.WaitDone in
// Info's flags; Len their argument).
type Event struct {
	Addr uint64
	Info uint64
	Len  uint64
}

// Config is what the detector is started with.
type Config struct {
	Options hgopts.Options
	// Bias is the main program's load bias (0 unless PIE): a data address
	// minus Bias is its link-time address.
	Bias uint64
	// Exe is the program file symbols are read from; "" is
	// /proc/self/exe. A file that cannot be read gives reports with bare
	// addresses.
	Exe string
	// Memory is the shadow memory to work in; nil maps a new one. The
	// detector of a forked child gets one in memory shared with the child
	// (runtime/serve.go).
	Memory *shadow.Memory
	// Pid is the process reports name; 0 is this one.
	Pid int
	// LocksetMirror, if not nil, takes a copy of every lockset the
	// detector makes (shadow.Locksets.SetMirror): the C fast path's.
	LocksetMirror []uint64
}

// LockStep is a lock operation that changed a thread's locksets: a first
// acquisition of Mutex (Op abi.LockStepWrite or abi.LockStepRead) or its
// last release (abi.LockStepUnlock); Op 0 for none.
type LockStep struct {
	Mutex uint64
	Op    uint8
}
