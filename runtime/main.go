// Command runtime is the hgrewrite runtime library, built with
// -buildmode=c-shared into libhgrt.so and loaded by every rewritten
// executable as its first DT_NEEDED.
//
// It owns the run-time side of the rewrite contract (hgrt.h) and the race
// detector:
//   - fastpath.c: the entry points trampolines call, run on every access:
//     they count accesses, settle the common case on shadow memory
//     (hg_handled) and buffer the rest per thread;
//   - threads.c: the per-thread records (arena, registration, the list of
//     threads) and the flush of buffered events to the Go side;
//   - shadow.c: the shadow directory pointer and the reset of a heap
//     block's cells without the Go side;
//   - wrappers.c: interposed pthread/semaphore functions;
//   - ranges.c: address ranges of the loaded objects (is a return address
//     in this library, its link-time address in the main program);
//   - malloc.c: interposed allocation functions, C++ new and delete;
//   - strings.c: interposed memory and string functions, as range accesses;
//   - lockorder.c: the pairs of locks (held, acquired) seen, so that
//     only a new one takes a stack for the lock-order graph;
//   - loops.c: spin variables, mutexes used with condition variables, a
//     load that cannot fault;
//   - start.c: start-up (options, the header in the program, entry slots),
//     fork handling, exit statistics and the exit-status rule;
//   - demangle.c: C++ names in reports;
//   - remote.c: the C side's entry points into the detector (hg_d_*),
//     which go to the Go side here or, in a forked child that starts
//     threads, to a detector process of the child's own; serve.go is
//     that process's side;
//   - exports.go, host.go, epochs.go: the Go side's cgo adapter. The
//     //export functions forward the C side's calls to the detector,
//     package detect (runtime/detect), which runs the memory state
//     machines (package msm) over shadow memory (package shadow) and writes
//     reports; host.go implements its Host interface (printing, halting,
//     demangling, code addresses, the threads' C records), epochs.go
//     publishes threads' epochs and the shadow directory to the fast path.
//
// hgrt.h declares the contract, what the Go side sees of the C side and
// what the C files use of each other; rt_internal.h, which the Go side does
// not see, the C files' private plumbing.
//
// Per-access work stays in C; the Go side sees batches. Nothing calls into
// Go in a forked child: a child inherits the Go runtime's locks but not its
// threads, so a call could deadlock. Its detector runs in another process
// (remote.c, serve.go).
//
// Build it with make: the Makefile's RTGODEBUG sets the Go runtime's
// settings the library needs (no cgroup files kept open in the program's
// descriptor table, no preemption signals sent to program threads).
package main

/*
#cgo CFLAGS: -O2 -Wall -fno-omit-frame-pointer
#cgo LDFLAGS: -ldl
#include "hgrt.h"
*/
import "C"

import "os"

// stderr is the runtime's own duplicate of the program's standard error,
// made at start-up: programs such as coreutils close fd 2 before exiting.
var stderr = os.Stderr

func main() {}
