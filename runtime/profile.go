package main

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// Profiles of the detector's Go side, for the runtime's developers:
// HG_PPROF_HEAP=FILE writes a heap profile (pprof format) when the
// program ends (`go tool pprof bin/libhgrt.so FILE`). The live heap is
// mostly the hand-off tables' segments; this shows which. CPU time is
// better seen with perf, which sees the C side too.

// writeHeapProfile writes the profile HG_PPROF_HEAP asks for, if any.
func writeHeapProfile() {
	path := os.Getenv("HG_PPROF_HEAP")
	if path == "" {
		return
	}
	f, err := os.Create(path)
	if err == nil {
		err = pprof.Lookup("heap").WriteTo(f, 0)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "hgrewrite runtime: HG_PPROF_HEAP: %v\n", err)
	}
}
