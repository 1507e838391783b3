package main

import (
	"os"
	"runtime"
	"sync"
	"sync/atomic"

	"hgrewrite/abi"
)

// The Go scheduler's Ps and the program's threads. A thread that returns
// from a call into Go keeps its P while it runs C (cgo parks it in the
// syscall state) until the Go runtime's monitor thread (sysmon) takes it
// back. When every P is held so, sysmon takes one back every 20 µs and
// starts an M that spins for work, which competes with the program for
// its CPUs, and the thread's next call into Go has to find a P again. So
// the runtime keeps one P more than the program has threads that call
// into Go often ("busy": busyCalls calls so far), up to a cap, unless the
// environment sets GOMAXPROCS.
//
// Measured on this project's 2-CPU machine:
//   - at start, the number of CPUs + 1, at least 4 (2026-11-27, 7 runs
//     each, interleaved): bench/pipeline.c 1.55-1.90 s with 2 Ps,
//     1.16-1.27 with 4, 1.20-1.26 with 8; bench/locks.c 1.48-1.60,
//     1.22-1.31 and 1.19-1.28; sysmon, its retakes and the M wake-ups
//     they caused were 4.8% of the pipeline's samples with 2 Ps, 1.4%
//     with 8. Each P the threads use costs its allocation caches:
//     locks.c's peak memory 21.0 MB with 2, 21.3 with 3, 21.6 with 8.
//   - with the busy threads (2026-11-29, 3 runs each, interleaved):
//     memcached (ten threads) under /tmp/mc41/bench served 7.1-9.3
//     thousand requests/s with 4 Ps and 8.5-11.5 with 12, with 10-30%
//     less CPU per request; sysmon's sleeps went from 39-40 to 20
//     thousand, futex calls from 128-148 to 96-113 thousand in 8 s.
//     Counting every live thread instead grew the Ps for
//     bench/threads_detached.c's short-lived threads too (eight at a
//     time), whose peak memory went from 13.7-14.1 MB to 14.5-15.1 with
//     16 Ps (ThreadSanitizer's 14.3-15.0).
//
// The cap keeps the collector, whose dedicated workers are a quarter of
// the Ps, from outnumbering the CPUs many times over; a program with more
// busy threads than that still has them compete. GOMAXPROCS only grows:
// each change stops the world.

// busyCalls is the number of calls into Go that make a thread busy.
const busyCalls = 256

var procs procCount

type procCount struct {
	fixed bool       // the environment sets GOMAXPROCS
	mu    sync.Mutex // one change at a time
	busy  int32      // busy threads now, under mu
	now   int32      // GOMAXPROCS, under mu
	cap   int32
	// calls counts each thread's calls into Go, by thread id: only the
	// thread itself counts (its flushes), its creator resets it.
	calls [abi.MaxThreads]atomic.Uint32
}

// start sets the first count.
func (p *procCount) start() {
	if os.Getenv("GOMAXPROCS") != "" {
		p.fixed = true
		return
	}
	ncpu := int32(runtime.NumCPU())
	p.cap = max(16, 4*ncpu)
	p.now = max(ncpu+1, 4)
	runtime.GOMAXPROCS(int(p.now))
}

// threadStarts: tid is a new thread's.
func (p *procCount) threadStarts(tid int32) {
	if uint32(tid) < abi.MaxThreads {
		p.calls[tid].Store(0)
	}
}

// called counts a call into Go by thread tid; its busyCalls-th makes the
// thread busy, which adds a P when the busy threads would hold them all.
func (p *procCount) called(tid int32) {
	if p.fixed || uint32(tid) >= abi.MaxThreads {
		return
	}
	c := &p.calls[tid]
	n := c.Load() + 1
	if n > busyCalls {
		return // busy already: the count stops
	}
	c.Store(n)
	if n < busyCalls {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.busy++
	if want := min(p.cap, p.busy+1); want > p.now {
		p.now = want
		runtime.GOMAXPROCS(int(p.now))
	}
}

// threadEnds: thread tid ends (the Ps stay).
func (p *procCount) threadEnds(tid int32) {
	if p.fixed || uint32(tid) >= abi.MaxThreads || p.calls[tid].Load() < busyCalls {
		return
	}
	p.mu.Lock()
	p.busy--
	p.mu.Unlock()
}
