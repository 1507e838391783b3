package detect

import "fmt"

// The report of a lock-order inversion (lockorder.go), in
// ThreadSanitizer's form: the cycle, each edge's acquisition with its
// thread and stack, where each mutex lives, and how the threads were
// created. Mutexes are named M1, M2, ... in the cycle's order. It is a
// raceReport of kind kindLockOrder, so that suppressions (deadlock:),
// JSON and SARIF take it as they take races.

// lockCycle reports a cycle of the lock-order graph (cycle[i].to is
// cycle[i+1].from, the last edge's to the first's from).
func (r *reporter) lockCycle(cycle []lockEdge) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rep := &raceReport{Kind: kindLockOrder, Pid: r.pid}
	seen := map[[2]int64]bool{}
	for _, e := range cycle {
		from, to := r.mutex(e.from), r.mutex(e.to)
		rep.Cycle = append(rep.Cycle, reportEdge{From: from, To: to, TID: e.by.tid, Stack: r.stackFrames(e.stack)})
		rep.Locks = append(rep.Locks, from)
		rep.Mutexes = append(rep.Mutexes, r.location(e.from))
		if key := [2]int64{int64(e.by.tid), int64(e.by.earlier)}; !seen[key] {
			seen[key] = true
			rep.Threads = append(rep.Threads, reportThread{TID: e.by.tid, Parent: e.by.parent, Main: e.by.parent < 0,
				Earlier: e.by.earlier, Created: r.creationFrames(e.by.createStack, e.by.createPC)})
		}
	}
	if !r.publish(rep) {
		return
	}
	r.inversions++
	if r.d.opts.HaltOnError {
		r.summaryLocked()
		r.files.close()
		r.d.host.Halt(r.d.opts.ExitCode)
	}
}

// mutex names a mutex for a report: a global's name, else its address.
func (r *reporter) mutex(addr uint64) reportLock {
	lk := reportLock{Addr: addr}
	if name, off, _, ok := r.sym.global(addr - r.d.bias); ok && off == 0 {
		lk.Name = name
	}
	return lk
}

// lockOrderText is the text of a lock-order report.
func (rep *raceReport) lockOrderText() string {
	var b []byte
	b = fmt.Appendf(b, "==================\nWARNING: hgrewrite: %s (pid %d)\n", rep.Kind, rep.Pid)
	b = append(b, "  Cycle in lock order graph:"...)
	for i, e := range rep.Cycle {
		b = fmt.Appendf(b, " M%d (%#x) =>", i+1, e.From.Addr)
	}
	b = append(b, " M1\n"...)
	for i, e := range rep.Cycle {
		b = fmt.Appendf(b, "  Mutex M%d acquired here while holding mutex M%d in thread T%d:\n", (i+1)%len(rep.Cycle)+1, i+1, e.TID)
		if len(e.Stack) == 0 {
			b = append(b, "    (no stack)\n"...)
		}
		for k, f := range e.Stack {
			b = fmt.Appendf(b, "    #%d %s\n", k, f.text())
		}
	}
	for i, m := range rep.Mutexes {
		b = append(b, m.mutexText(i+1)...)
	}
	return string(b)
}
