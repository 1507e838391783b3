package detect

import (
	"fmt"
	"strings"
)

// The report of a lock-order inversion (lockorder.go), in
// ThreadSanitizer's form: the cycle, each edge's acquisition with its
// thread and stack, where each mutex lives, and how the threads were
// created. Mutexes are named M1, M2, ... in the cycle's order.

// lockCycle prints the report of a cycle of the lock-order graph
// (cycle[i].to is cycle[i+1].from, the last edge's to the first's from).
func (r *reporter) lockCycle(cycle []lockEdge) {
	var b strings.Builder
	fmt.Fprintf(&b, "==================\nWARNING: hgrewrite: lock-order inversion (potential deadlock) (pid %d)\n", r.pid)
	b.WriteString("  Cycle in lock order graph:")
	for i, e := range cycle {
		fmt.Fprintf(&b, " M%d (%#x) =>", i+1, e.from)
	}
	b.WriteString(" M1\n")
	for i, e := range cycle {
		fmt.Fprintf(&b, "  Mutex M%d acquired here while holding mutex M%d in thread T%d:\n", (i+1)%len(cycle)+1, i+1, e.by.tid)
		if frames := r.frames(e.stack); frames != "" {
			b.WriteString(frames)
		} else {
			b.WriteString("    (no stack)\n")
		}
	}
	for i, e := range cycle {
		b.WriteString(mutexLocation(i+1, r.location(e.from)))
	}
	threads := map[lockThread]bool{}
	for _, e := range cycle {
		if !threads[e.by] {
			threads[e.by] = true
			r.lockThreadCreation(&b, e.by)
		}
	}
	b.WriteString("==================\n")
	r.print(b.String())
	if r.d.opts.HaltOnError {
		r.d.host.Halt(r.d.opts.ExitCode)
	}
}

// lockThreadCreation says where the thread of an edge was created. The
// thread may have exited since, and its id gone to another: the edge
// keeps what the report needs.
func (r *reporter) lockThreadCreation(b *strings.Builder, t lockThread) {
	reused := ""
	if t.earlier > 0 {
		reused = fmt.Sprintf(" (id reused: %d earlier thread(s) had it)", t.earlier)
	}
	switch {
	case t.parent < 0:
		fmt.Fprintf(b, "  Thread T%d is the main thread.\n", t.tid)
	case t.createPC != 0:
		fmt.Fprintf(b, "  Thread T%d%s created by T%d at:\n    #0 %s\n", t.tid, reused, t.parent, r.sym.code(t.createPC))
	default:
		fmt.Fprintf(b, "  Thread T%d%s created by T%d.\n", t.tid, reused, t.parent)
	}
}

// mutexLocation turns the reporter's description of a location ("
// Location is global 'a' ...") into one of mutex Mn ("  Mutex M1 is
// global 'a' ..."); a description of another form is kept whole under
// the mutex's name.
func mutexLocation(n int, loc string) string {
	if rest, ok := strings.CutPrefix(loc, "  Location "); ok {
		return fmt.Sprintf("  Mutex M%d %s", n, rest)
	}
	return fmt.Sprintf("  Mutex M%d:\n%s", n, loc)
}

// lockOrderSummary prints the summary line of the inversions reported
// and returns their number.
func (r *reporter) lockOrderSummary(n int) int {
	if n > 0 {
		r.sym.load()
		r.print(fmt.Sprintf("SUMMARY: hgrewrite: %d lock-order inversion(s) (potential deadlocks) reported in %s\n", n, r.sym.name))
	}
	return n
}
