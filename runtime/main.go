// Command runtime is the hgrewrite runtime library, built with
// -buildmode=c-shared into libhgrt.so and loaded by every rewritten
// executable as its first DT_NEEDED.
//
// It owns the run-time side of the rewrite contract (hgrt.h): the C entry
// points trampolines call (fastpath.c), start-up (finding the header the
// rewriter left in the program and filling its entry slots), HG_OPTIONS, and
// what is printed at exit. Per-access work stays in C; Go handles options
// and output.
package main

/*
#cgo CFLAGS: -O2 -Wall -fno-omit-frame-pointer
#include "hgrt.h"
*/
import "C"

import (
	"fmt"
	"os"
)

//export hgGoInit
func hgGoInit(o *C.struct_hg_options) C.int {
	stderr = os.NewFile(uintptr(o.err_fd), "stderr")
	opts, err := parseOptions(os.Getenv("HG_OPTIONS"))
	if err != nil {
		fmt.Fprintf(stderr, "hgrewrite runtime: HG_OPTIONS: %v\n", err)
		return 1
	}
	current = opts
	if opts.Stats {
		o.stats = 1
	}
	o.verbosity = C.int(opts.Verbosity)
	return 0
}

//export hgGoStats
func hgGoStats(accesses, ranges, bytes, threads uint64, pid int) {
	w, closeFn := output()
	defer closeFn()
	fmt.Fprintf(w, "hgrewrite: pid %d: %d memory accesses checked, %d string ranges (%d bytes), %d threads\n",
		pid, accesses, ranges, bytes, threads)
}

func main() {}
