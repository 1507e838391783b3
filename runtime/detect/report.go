package detect

import (
	"fmt"
	"os"
	"strings"
	"sync"

	"hgrewrite/abi"
	"hgrewrite/msm"
	"hgrewrite/shadow"
)

// reporter turns races into reports: one per racy context (the unordered
// pair of code locations), symbolised with the program's own symbols and
// line tables.
type reporter struct {
	d        *Detector
	pid      int // the process the reports name
	mu       sync.Mutex
	sym      symbolizer
	contexts map[[2]uint32]bool
	reports  int // printed
	races    int // racy contexts found, printed or not
}

func (r *reporter) init(d *Detector, exe string, pid int) {
	r.d = d
	r.pid = pid
	if pid == 0 {
		r.pid = os.Getpid()
	}
	r.contexts = map[[2]uint32]bool{}
	r.sym.exe = exe
	r.sym.host = d.host
}

func accessWord(flags uint8) string {
	if flags&accessFree != 0 {
		return "Free"
	}
	if flags&abi.Write != 0 {
		if flags&abi.Read != 0 {
			return "Read-write"
		}
		return "Write"
	}
	return "Read"
}

// race reports that t's access made a location enter Race. prev is the
// packed previous access from the shadow cell (shadow.PackAccess; 0 if none
// was recorded). The report waits in t.pending for the thread's stack
// (emit), unless halt_on_error prints it and ends the process.
func (r *reporter) race(t *thread, addr, size uint64, pc uint32, flags uint8, prev uint64, cell msm.Cell) {
	ppc, ptid, pflags, psize, _ := shadow.UnpackAccess(prev)
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.newContext(pc, ppc) {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "==================\nWARNING: hgrewrite: data race (pid %d)\n", r.pid)
	fmt.Fprintf(&b, "  %s of size %d at %#x by thread T%d:\n", accessWord(flags), size, addr, t.tid)
	fmt.Fprintf(&b, "    #0 %s\n", r.sym.code(uint64(pc)))
	if prev != 0 {
		fmt.Fprintf(&b, "  Previous %s of size %d by thread T%d:\n", strings.ToLower(accessWord(pflags)), psize, ptid)
		fmt.Fprintf(&b, "    #0 %s\n", r.sym.code(uint64(ppc)))
	}
	b.WriteString(r.location(addr))
	r.locksHeld(&b, t, flags)
	r.creation(&b, t.tid)
	if prev != 0 {
		r.creation(&b, int32(ptid))
	}
	r.verdict(&b, t, cell)
	if r.d.opts.HaltOnError {
		b.WriteString("==================\n")
		r.print(b.String())
		r.d.host.Halt(r.d.opts.ExitCode)
	}
	// The report is finished by emit, once the thread's stack is known.
	t.pending = append(t.pending, b.String())
	t.npending.Store(int32(len(t.pending)))
}

// wouldPrint says whether a race between the code locations pc and ppc
// would be printed: its context is new and max_reports not reached.
func (r *reporter) wouldPrint(pc, ppc uint32) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return !r.contexts[contextKey(pc, ppc)] && !r.full()
}

// contextKey is the racy context of the code locations pc and ppc,
// unordered.
func contextKey(pc, ppc uint32) [2]uint32 { return [2]uint32{min(pc, ppc), max(pc, ppc)} }

// full says whether max_reports reports were printed. The caller holds
// r.mu.
func (r *reporter) full() bool {
	return r.d.opts.MaxReports > 0 && r.reports >= r.d.opts.MaxReports
}

// newContext counts the racy context of the code locations pc and ppc
// (unordered) and says whether it is new and to be printed (max_reports).
// The caller holds r.mu.
func (r *reporter) newContext(pc, ppc uint32) bool {
	key := contextKey(pc, ppc)
	if r.contexts[key] {
		return false
	}
	r.contexts[key] = true
	r.races++
	if r.full() {
		return false
	}
	r.reports++
	return true
}

// verdict names the state machine and the state the location is in, and
// with verbosity the segments that were found unordered.
func (r *reporter) verdict(b *strings.Builder, t *thread, cell msm.Cell) {
	fmt.Fprintf(b, "  Detected by MSM-%s: the location is now in state %v.\n", r.d.opts.MSM, cell.State)
	if r.d.opts.Verbosity > 0 {
		pt := epochTID(cell.TS)
		fmt.Fprintf(b, "  Last ordered segment T%d@%d; T%d has seen T%d up to %d.\n", pt, uint64(cell.TS)&shadow.CellClockMask,
			t.tid, pt, t.vc.Get(pt))
	}
}

// pendingCount is the number of t's reports waiting for a stack. Every
// flush asks, so it reads the count without the reporter's lock, which
// all threads would contend for (2% of bench/locks.c's samples).
func (r *reporter) pendingCount(t *thread) int {
	return int(t.npending.Load())
}

// Stack prints thread tid's pending reports with its call stack: the
// return addresses the C side captured at the thread's first interposed
// call after Flush or Free returned a pending count, innermost first.
func (d *Detector) Stack(tid int32, stack []uint64) {
	if t := d.thread(tid); t != nil {
		d.lockOrderStack(t, stack)
		d.rep.emit(t, stack)
	}
}

// emit prints t's pending reports. stack holds the return addresses of the
// thread's call stack at its first interposed call after the accesses
// were checked (nil at exit). Reports found when the buffer filled up
// inside instrumented code wait for that call: trampolines have no unwind
// information.
func (r *reporter) emit(t *thread, stack []uint64) {
	r.mu.Lock()
	pending := t.pending
	t.pending = nil
	t.npending.Store(0)
	r.mu.Unlock()
	if len(pending) == 0 {
		return
	}
	frames := r.frames(stack)
	for _, rep := range pending {
		var b strings.Builder
		b.WriteString(rep)
		if frames != "" {
			fmt.Fprintf(&b, "  Stack of T%d at its next synchronisation or library call after the access:\n%s", t.tid, frames)
		}
		b.WriteString("==================\n")
		r.print(b.String())
	}
}

// frames symbolises a call stack: frames in the runtime library are
// dropped, frames of the program get function and line (of the call),
// frames in other libraries their address.
func (r *reporter) frames(stack []uint64) string {
	var b strings.Builder
	k := 0
	started := false
	for _, ra := range stack {
		if r.d.host.InRuntime(ra) {
			if started {
				break // the runtime's own threads start below the program
			}
			continue
		}
		started = true
		if lp := r.d.host.LinkPC(ra); lp != 0 {
			fmt.Fprintf(&b, "    #%d %s\n", k, r.sym.code(lp-1))
		} else {
			fmt.Fprintf(&b, "    #%d %#x (in a shared library)\n", k, ra)
		}
		k++
	}
	return b.String()
}

func (r *reporter) location(addr uint64) string {
	link := addr - r.d.bias
	if name, off, size, ok := r.sym.global(link); ok {
		if off != 0 {
			return fmt.Sprintf("  Location is global '%s' at offset %d (of size %d) at %#x (%s+%#x)\n", name, off, size, addr, r.sym.name, link)
		}
		return fmt.Sprintf("  Location is global '%s' of size %d at %#x (%s+%#x)\n", name, size, addr, r.sym.name, link)
	}
	if start, blk, ok := r.d.heap.find(addr); ok {
		where := "an unknown site"
		if blk.pc != 0 {
			where = r.sym.code(blk.pc)
		}
		return fmt.Sprintf("  Location is heap block of size %d at %#x (offset %d), allocated by thread T%d at:\n    #0 %s\n",
			blk.size, start, addr-start, blk.tid, where)
	}
	return fmt.Sprintf("  Location at %#x is not a global variable or live heap block of %s (stack or a library's memory).\n", addr, r.sym.name)
}

func (r *reporter) locksHeld(b *strings.Builder, t *thread, flags uint8) {
	id := t.held
	if flags&abi.Write != 0 {
		id = t.writeHeld
	}
	locks := r.d.locks.Members(id)
	if len(locks) == 0 {
		fmt.Fprintf(b, "  Locks held by T%d: none\n", t.tid)
		return
	}
	var names []string
	for _, l := range locks {
		if name, _, _, ok := r.sym.global(l - r.d.bias); ok {
			names = append(names, fmt.Sprintf("%s (%#x)", name, l))
		} else {
			names = append(names, fmt.Sprintf("%#x", l))
		}
	}
	fmt.Fprintf(b, "  Locks held by T%d: %s\n", t.tid, strings.Join(names, ", "))
}

func (r *reporter) creation(b *strings.Builder, tid int32) {
	t := r.d.thread(tid)
	switch {
	case t == nil:
	case tid == 0:
		fmt.Fprintf(b, "  Thread T0 is the main thread.\n")
	case t.createPC != 0:
		fmt.Fprintf(b, "  Thread T%d created by T%d at:\n    #0 %s\n", tid, t.parent, r.sym.code(t.createPC))
	default:
		fmt.Fprintf(b, "  Thread T%d created by T%d.\n", tid, t.parent)
	}
	if t == nil || t.earlier == 0 {
		return
	}
	// A previous access by tid may be an earlier thread's: an access
	// records the id, not which of its threads made it.
	fmt.Fprintf(b, "  The id T%d is reused: %d earlier thread(s) had it, each joined before the next started; "+
		"a previous access by T%d may be theirs.\n", tid, t.earlier, tid)
	for i, p := range t.past {
		if p.createPC != 0 {
			fmt.Fprintf(b, "  Earlier T%d (%d back) created by T%d at:\n    #0 %s\n", tid, i+1, p.parent, r.sym.code(p.createPC))
		} else {
			fmt.Fprintf(b, "  Earlier T%d (%d back) created by T%d.\n", tid, i+1, p.parent)
		}
	}
}

func (r *reporter) print(s string) {
	r.d.host.Print(s)
}

// summary prints the exit summary and returns the number of racy contexts.
func (r *reporter) summary() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.races > 0 {
		extra := ""
		if r.races > r.reports {
			extra = fmt.Sprintf(" (%d printed, max_reports=%d)", r.reports, r.d.opts.MaxReports)
		}
		r.print(fmt.Sprintf("SUMMARY: hgrewrite: %d data race(s) reported in %s%s\n", r.races, r.sym.name, extra))
	}
	return r.races
}
