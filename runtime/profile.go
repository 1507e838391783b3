package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

// Profiles of the detector's Go side, for the runtime's developers, each
// written in pprof format when the program ends (`go tool pprof
// bin/libhgrt.so FILE`):
//   - HG_PPROF_HEAP=FILE: the live heap (mostly the hand-off tables).
//   - HG_PPROF_MUTEX=FILE: where the Go side's mutexes were contended. A
//     program thread whose callback blocks on one parks its locked OS
//     thread (two futex calls and a context switch each).
//
// CPU time is better seen with perf, which sees the C side too.

// startProfiles turns on the sampling the profiles asked for need.
func startProfiles() {
	if os.Getenv("HG_PPROF_MUTEX") != "" {
		runtime.SetMutexProfileFraction(1)
	}
}

// writeProfiles writes the profiles asked for.
func writeProfiles() {
	writeProfile("HG_PPROF_HEAP", "heap")
	writeProfile("HG_PPROF_MUTEX", "mutex")
}

// writeProfile writes profile name to the file the environment variable
// env names, if any.
func writeProfile(env, name string) {
	path := os.Getenv(env)
	if path == "" {
		return
	}
	f, err := os.Create(path)
	if err == nil {
		err = pprof.Lookup(name).WriteTo(f, 0)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "hgrewrite runtime: %s: %v\n", env, err)
	}
}
