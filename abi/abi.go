// Package abi is the binary contract between the rewriter and the runtime:
// the runtime header that hgrewrite writes into every rewritten executable,
// the info word that trampolines pass with each access, the event flags,
// loop-hook kinds and lock/wait bits that the runtime's C side hands to the
// detector. It is the one definition of these numbers: elfrw, patch and the
// runtime's Go code use the constants here, and the runtime's C code gets
// them from runtime/hgabi.h, which is generated from this package (and from
// package shadow's cell layout) by `go test ./abi -update`; TestCHeader fails
// when the header and these constants disagree.
package abi

// The runtime header sits at the start of the data segment the rewriter adds
// (elfrw/write.go). The runtime finds it by its magic and fills the two
// entry slots; trampolines call through them.
const (
	HeaderMagic      = "HGRWDAT1"
	HeaderVersion    = 3
	HeaderSize       = 64
	HdrOffVersion    = 8  // uint32
	HdrOffFlags      = 12 // uint32: HdrFlag*
	HdrOffTextAddr   = 16 // uint64: link-time address of the trampoline segment
	HdrOffTextSize   = 24 // uint64
	HdrOffSlotAccess = 32 // uint64: void (*)(uint64 addr, uint64 info)
	HdrOffSlotRange  = 40 // uint64: void (*)(uint64 addr, uint64 info, uint64 count)
	HdrOffSlotBatch  = 48 // uint64: void (*)(const uint64 *pairs, uint64 n): n (addr, info) pairs
	HdrOffSlotTrace  = 56 // int64: the thread pointer offset of the call trace's TLS pointer; 0 until the runtime sets it
	HdrFlagPIE       = 1
	// HdrFlagNoVEX: no VEX (or EVEX, or XOP) encoded instruction in the
	// program's code, so no vector register holds a live value past its
	// low 128 bits at an instrumented instruction: around a call into
	// the detector from a trampoline, the runtime saves the x87 and SSE
	// state only. HdrFlagNoEVEX: no EVEX encoded instruction, so no
	// AVX-512 state is live (the AVX state is saved, not the AVX-512
	// state). Set only when every instruction of the executable sections
	// decoded: the flags' absence (a file of an older hgrewrite too)
	// saves it all.
	HdrFlagNoVEX  = 2
	HdrFlagNoEVEX = 4
)

// A trampoline steps over the red zone below the program's stack pointer
// and saves flags, rdi and rsi (not the flags where the code overwrites
// them first) before it calls the access slot; the batch slot gets its
// pairs below those. So at the call the program's rsp is at most
// TrampolineSaved bytes above the trampoline's (and at least
// TrampolineSaved-8): the runtime uses that to find which frame of a
// later call stack an access was made in (reports).
const (
	TrampolineRedZone = 128
	TrampolineSaved   = TrampolineRedZone + 24
)

// The call trace. Each program function's entry appends an entry to the
// calling thread's trace (patch, entryGlue), without a call and without
// touching flags or any register it does not restore: the runtime's
// initial-exec TLS variable at thread-pointer offset *HdrOffSlotTrace
// points to the thread's trace, a 16-bit byte position at offset 0 and
// TraceBytes of entries from offset TraceHeader, a ring the position
// wraps around by itself (16-bit arithmetic). An entry is two words:
//
//	word 0: the low 32 bits of rsp at the entry (the return address's
//	        slot) | the function's link-time start << 32
//	word 1: the return address
//
// Word 0's high half is TraceMarkEpoch in an entry the runtime adds when
// the thread's published epoch changes (word 1 holds the new cell epoch),
// and TraceMarkReset where the trace passed to a new thread. Reports
// replay a thread's trace to restore the callers of an earlier access
// (runtime/detect, calltrace.go).
const (
	TraceHeader    = 16
	TraceBytes     = 1 << 16
	TraceEntry     = 16
	TraceMarkEpoch = 0xffffffff
	TraceMarkReset = 0xfffffffe
)

// EventLenSP marks the len word of a plain access event (one that is no
// range) that carries the program's stack pointer at the access, as the
// fast path estimated it (at most 8 bytes above): len is then
// EventLenSP | sp, and the access's length is its info size.
const EventLenSP = 1 << 63

// The info word: the instruction's link-time address in the low 32 bits,
// the access size in bytes in bits 32-47, the flags in bits 48-63.
const (
	InfoSizeShift  = 32
	InfoFlagsShift = 48
)

// Info packs the info word of one access or event.
func Info(pc uint64, size uint16, flags uint16) uint64 {
	return uint64(uint32(pc)) | uint64(size)<<InfoSizeShift | uint64(flags)<<InfoFlagsShift
}

// SplitInfo unpacks an info word.
func SplitInfo(info uint64) (pc uint32, size uint16, flags uint16) {
	return uint32(info), uint16(info >> InfoSizeShift), uint16(info >> InfoFlagsShift)
}

// Flags of the info word. Read, Write, Atomic, Post, Spin, Ordered and
// SpinStatic come from trampolines; the others from the runtime's wrappers
// (the C side), which use the same word for events that are not accesses.
const (
	Read   = 1
	Write  = 2
	Atomic = 4
	// Post marks the second call of an atomic access, after the
	// instruction: the acquire half. The runtime remembers the address
	// from the first call, since the instruction may have changed the
	// registers that formed it.
	Post      = 8
	Alloc     = 16  // heap block allocated: addr, len = size
	Free      = 32  // heap block released: addr, len = usable size
	Lock      = 64  // lock acquired: addr, len = Lock* bits
	Unlock    = 128 // lock released: addr, len = Lock* bits
	ResetDone = 256 // with Alloc: the C side reset the shadow already
	// Spin, with Atomic: a spinning-read-loop condition load (acquire
	// after) or a counterpart write to it (release before).
	Spin = 512
	Hook = 1024 // not an access: a loop hook, its kind in the size field
	// Ordered, with Spin|Atomic: an atomic load or store that compiles to
	// a plain move (C++ std::atomic accessors at -O0): acquire after a
	// load, release before a store, whatever the spin option.
	Ordered = 2048
	// SpinStatic, with Spin: a spinning load from a fixed address whose
	// stores the rewriter marked, so the runtime need not watch every
	// store for it.
	SpinStatic = 4096
	Signal     = 8192  // not an access: pthread_cond_signal/broadcast on addr
	WaitDone   = 16384 // not an access: a condition wait on addr returned; len: Wait* bits
)

// Loop-hook kinds, in the size field of a Hook info word.
const (
	HookWait  = 1     // the next condition wait is inside a wait loop
	HookExit  = 2     // a wait loop is left; addr: its condition variable, or 0
	HookLock  = 3     // addr: a mutex locked in a function that signals
	HookDeref = 0x100 // with HookExit: addr holds the condition variable's address
	// HookAnnotate: a call of a dynamic-annotation function (rewrite,
	// annotations.go): addr points to the five argument registers (rdi,
	// rsi, rdx, rcx, r8) as the call passes them, and the pc field holds
	// the annotation (Ann*).
	HookAnnotate = 4
	// HookRequest: a Valgrind client request (the magic sequence's
	// xchg %rbx,%rbx): addr points to two words, the request block's
	// address (rax) and the result (rdx), which holds the default on entry
	// and the request's result on return.
	HookRequest = 5
)

// The dynamic annotations the runtime knows, in the pc field of a
// HookAnnotate info word; their arguments are those of ThreadSanitizer's
// dynamic_annotations.h functions (file, line, then the rest).
const (
	AnnHappensBefore   = 1  // (file, line, addr)
	AnnHappensAfter    = 2  // (file, line, addr)
	AnnBenignRaceSized = 3  // (file, line, addr, size, desc)
	AnnBenignRace      = 4  // (file, line, addr, desc): one byte
	AnnIgnoreReadsBeg  = 5  // (file, line)
	AnnIgnoreReadsEnd  = 6  // (file, line)
	AnnIgnoreWritesBeg = 7  // (file, line)
	AnnIgnoreWritesEnd = 8  // (file, line)
	AnnRWLockAcquired  = 9  // (file, line, lock, is_w)
	AnnRWLockReleased  = 10 // (file, line, lock, is_w)
	AnnNewMemory       = 11 // (file, line, addr, size)
	AnnCondVarSignal   = 12 // (file, line, cv)
	AnnCondVarWait     = 13 // (file, line, cv, lock)
)

// The len of a WaitDone event.
const (
	WaitInLoop = 1 // the wait was marked as inside a wait loop
	WaitWoke   = 2 // it returned 0 (not a timeout)
)

// The len of an Atomic event.
const (
	// AcquireKnown: nothing was released on the word since the thread
	// last acquired it (runtime/fastpath.c, hg_acquire_known); the C
	// side began the thread's next segment itself, and the Go side's
	// clock only follows the tick.
	AcquireKnown = 1
	// ReleaseKnown, with an atomic's release half: the C side released
	// the thread's clock on the word itself (runtime/fastpath.c,
	// hg_release_known) and began the thread's next segment; the Go side's
	// clock only follows the tick.
	ReleaseKnown = 2
	// ClockRaise: the C side made an acquire of an atomic word itself
	// (runtime/fastpath.c, hg_take_in) and raised the component
	// addr >> 48 of the thread's clock to addr's lower 48 bits, which the
	// Go side's clock follows (one event per component raised, before
	// the acquire's tick event).
	ClockRaise = 4
	// TicksShift: the bits of an AcquireKnown or ReleaseKnown event's
	// len from here on count the segments more that the C side began
	// right after it, with no other event in between (the ticks of a
	// run of atomic instructions, merged: runtime/fastpath.c,
	// hg_tick_event). The Go side ticks once more for each.
	TicksShift = 32
)

// SyncSmall is how many components of an object's clock the object's
// slot of the release stamps holds, each tid << 48 | clock, for the C
// side's releases and acquires (runtime/detect/sync.go, syncStamp). The
// slot's meta word holds their count and the flags below.
const (
	SyncSmall = 11
	// SyncSmallValid: the components are the object's whole clock.
	SyncSmallValid = 1 << 8
	// SyncSmallC: the C side wrote them last, and the Go side's copy
	// of the clock lacks them until it folds them in.
	SyncSmallC = 1 << 9
)

// SyncKnown is how many synchronisation objects a thread's C record
// remembers having acquired, with their release stamps, direct-mapped by
// (address >> 3) mod SyncKnown.
const SyncKnown = 16

// The len of a Signal event.
const (
	// SignalAtEnd: the signal travels with its region's hand-over
	// (runtime/wrappers.c hg_signal), whose end publishes the region's
	// writes, those before the signal included; the signal itself
	// publishes none.
	SignalAtEnd = 1
)

// The len of Lock and Unlock events.
const (
	LockRead  = 1  // read mode (rwlock)
	LockWait  = 2  // the mutex released and re-acquired inside a condition wait
	LockCVM   = 4  // with Unlock: the mutex is used with condition variables
	LockBegin = 8  // with Lock: the outermost lock, a lock-protected region begins
	LockEnd   = 16 // with Unlock: the region's own mutex is released, the region ends
	// LockRecord, with LockEnd: the thread's record holds this region's
	// reads and writes (the C side hands the event over at once); without
	// it the record may already be a later region's.
	LockRecord = 32
	// LockNested, with Unlock|LockRecord: a lock taken inside the region
	// is released; the writes recorded since it was taken (the record's
	// writes from index len >> LockMarkShift on) were made under it.
	// LockWait|LockRecord on an Unlock: a condition wait releases the
	// mutex inside the region; the record's writes from index
	// len >> LockMarkShift on were made under it.
	LockNested = 64
	// LockReadsFull, with a Lock inside a region: the record's reads are
	// full; they go to the Go side with this event (published under the
	// locks held before it) and the C side records reads afresh, so that
	// the reads made under the new lock are seen (reverse hand-offs).
	LockReadsFull = 128
	// LockTry, with Lock: a trylock that succeeded. It cannot deadlock,
	// so it orders no lock before it (runtime/detect/lockorder.go); the
	// mutex it took still orders the locks taken while it is held.
	LockTry = 256
	// LockOrder, with Lock: the C side found a pair (a mutex held, this
	// one) it had not seen before, and takes the thread's call stack
	// right after this event's flush (runtime/lockorder.c): the lock
	// adds the new edges of the lock-order graph with that stack.
	LockOrder = 512
	// LockDestroy, with Unlock: the mutex is destroyed
	// (pthread_mutex_destroy and the like), not released: its edges of
	// the lock-order graph go.
	LockDestroy = 1024
	// LockTicked, with Unlock|LockEnd: the C side published the ending
	// region itself (runtime/regionpub.c: its writes and its reads, in
	// the hand-off tables) and moved the thread to its next
	// segment; the Go side ticks the thread's clock to follow, without
	// publishing the epoch, which the C side did.
	LockTicked = 2048
	// LockWaitedC, with Unlock|LockEnd: the region left a wait loop
	// whose exit the C side settled itself (runtime/fastpath.c,
	// hg_loop_exit_c: it would have joined nothing); the reads recorded
	// before it, the first len >> LockMarkShift, were searched there.
	LockWaitedC = 4096
	// LockWritesFull, with a Lock inside a region: the record's writes
	// fill half of it or more; they go to the Go side with this event
	// (published under the locks held before it) and the C side records
	// writes afresh, so that the writes made under the new lock are
	// seen (a maintenance thread that holds its own lock for a whole
	// pass, writes its statistics under it and returns items to a free
	// list under a nested lock: memcached's LRU maintainer).
	LockWritesFull = 8192
	LockMarkShift  = 16
)

// The lock operations that change a thread's locksets, as the Go side
// tells the C side's lock view (runtime/lockview.c) which lockset ids one
// leads to: a first acquisition in write or read mode, a last release.
const (
	LockStepWrite  = 1
	LockStepRead   = 2
	LockStepUnlock = 3
)

// MaxThreads is the number of thread ids an epoch can name (16-bit tids);
// the runtime's C side keeps each thread's current epoch in an array of
// this size.
const MaxThreads = 1 << 16
