// Command runtime is the hgrewrite runtime library, built with
// -buildmode=c-shared into libhgrt.so and loaded by every rewritten
// executable as its first DT_NEEDED.
//
// It owns the run-time side of the rewrite contract (hgrt.h): the C entry
// points trampolines call (fastpath.c), start-up (finding the header the
// rewriter left in the program and filling its entry slots), HG_OPTIONS, and
// what is printed at exit. Per-access work stays in C. Go parses the
// options at start-up; nothing calls into Go after a fork (a forked child
// inherits the Go runtime's locks but not its threads, so a call can
// deadlock), which is why the exit statistics are printed by C.
package main

/*
#cgo CFLAGS: -O2 -Wall -fno-omit-frame-pointer
#include "hgrt.h"
*/
import "C"

import (
	"fmt"
	"os"

	"hgrewrite/runtime/hgopts"
)

// stderr is the runtime's own duplicate of the program's standard error,
// made at start-up: programs such as coreutils close fd 2 before exiting.
var stderr = os.Stderr

//export hgGoInit
func hgGoInit(o *C.struct_hg_options) C.int {
	stderr = os.NewFile(uintptr(o.err_fd), "stderr")
	opts, err := hgopts.Parse(os.Getenv("HG_OPTIONS"))
	if err != nil {
		fmt.Fprintf(stderr, "hgrewrite runtime: HG_OPTIONS: %v\n", err)
		return 1
	}
	if opts.Stats {
		o.stats = 1
	}
	o.verbosity = C.int(opts.Verbosity)
	if len(opts.LogPath) >= len(o.log_path) {
		fmt.Fprintf(stderr, "hgrewrite runtime: HG_OPTIONS: log_path is longer than %d bytes\n", len(o.log_path)-1)
		return 1
	}
	for i := 0; i < len(opts.LogPath); i++ {
		o.log_path[i] = C.char(opts.LogPath[i])
	}
	return 0
}

func main() {}
