// Package detect is the race detector's core: Helgrind+'s hybrid
// lockset/happens-before algorithm (A. Jannesari, "Dynamic Race Detection
// in Parallel Programs", KIT 2010) over the events the runtime's C side
// hands over, and the reports it prints. It is pure Go (no cgo), so that it
// can be tested by feeding event sequences to a Detector with a fake Host;
// the runtime library (package main in runtime/) is a thin cgo adapter that
// implements Host and forwards its //export functions here.
//
// It owns:
//   - event processing (detector.go, events.go, access.go): accesses run the
//     memory state machine (package msm) on shadow cells (package shadow),
//     whose words it encodes and decodes with shadow's cell layout; locks
//     and unlocks change the thread's locksets (locks.go); releases and
//     acquires (semaphores, atomics, spinning-read loops, barriers) and
//     thread create, exit and join change vector clocks (sync.go,
//     threads.go);
//   - condition variables (cond.go): lock-protected regions, the
//     write/read relation and lost signals (dissertation ch. 6, HG_OPTIONS
//     lsd);
//   - heap blocks (heap.go): allocation sites for reports, and the check of
//     a free as a write to the block;
//   - reports (report.go): one per racy pair of code locations;
//   - symbolisation (symbols.go, symfile.go, dwarfinfo.go, procmaps.go):
//     code addresses of the program and of its shared libraries become
//     Frames (frame.go), inlined functions included, from each file's ELF
//     symbols and DWARF or from its separate debug file (build-id,
//     .gnu_debuglink); data addresses become the program's globals.
//   - lock-order inversions (lockorder.go, lockorder_report.go): the graph
//     of the order in which threads take locks, and a report per cycle.
//
// # Threading rules
//
// Every call about a thread (Flush, Free, Stack, ThreadCreate with it as
// the parent, ThreadExit, ThreadJoin as the joiner, Release, Acquire,
// BarrierArrive, BarrierLeave) arrives on that thread, one at a time: the
// C side calls in with the thread's re-entrancy guard up. So a thread's own
// state (vector clock, locksets, region recording, pending reports' list)
// is touched only by the thread itself, except that a creator sets up its
// child before the child runs, and a joiner reads the joined thread's final
// clock after it has exited. Tables shared between threads (the thread
// list, pthread handles, synchronisation objects' clocks, barriers) are
// guarded by Detector.mu; the write/read relation by its shards' locks;
// the heap-block table and the reporter by their own mutexes; shadow cells
// by the shadow memory's striped locks (a cell's word 0 is written with one
// atomic store, since the C fast path reads it without a lock). A thread's
// events in one Flush all belong to its current segment and lockset: the C
// side flushes before every synchronisation, so an access that happens
// before another is always processed first.
//
// Reports wait for a call stack: Flush and Free return the number of the
// thread's reports still pending; the C side then captures the thread's
// stack at its next interposed call (trampolines have no unwind
// information) and passes it to Stack, which prints them. Finish prints
// whatever is still pending, without a stack.
//
// Calls into the Host happen on the calling thread, sometimes under the
// detector's locks (see Host): a Host method must never call back into
// the Detector.
package detect
