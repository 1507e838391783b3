// Command runtime is the hgrewrite runtime library, built with
// -buildmode=c-shared into libhgrt.so and loaded by every rewritten
// executable as its first DT_NEEDED.
//
// It owns the run-time side of the rewrite contract (hgrt.h) and the race
// detector:
//   - fastpath.c: the entry points trampolines call; they count accesses and
//     buffer them per thread;
//   - wrappers.c: interposed pthread/semaphore functions;
//   - start.c: start-up (options, the header in the program, entry slots),
//     fork handling, exit statistics and the exit-status rule;
//   - exports.go, host.go, epochs.go: the Go side's cgo adapter. The
//     //export functions forward the C side's calls to the detector,
//     package detect (runtime/detect), which runs the memory state
//     machines (package msm) over shadow memory (package shadow) and writes
//     reports; host.go implements its Host interface (printing, halting,
//     demangling, code addresses, the threads' C records), epochs.go
//     publishes threads' epochs and the shadow directory to the fast path.
//
// Per-access work stays in C; the Go side sees batches. Nothing calls into
// Go in a forked child: a child inherits the Go runtime's locks but not its
// threads, so a call could deadlock; detection is off there.
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
