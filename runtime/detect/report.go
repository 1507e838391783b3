package detect

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"os"
	"strings"
	"sync"

	"hgrewrite/abi"
	"hgrewrite/msm"
	"hgrewrite/shadow"
)

// reporter turns races into reports: one per racy context (the unordered
// pair of code locations), symbolised with the program's own symbols and
// line tables. A report is built as data (raceReport), waits for the
// thread's stack, is matched against the suppressions, and is then
// written as text (Host.Print) and, when asked for, as JSON and SARIF
// (reportfiles.go).
type reporter struct {
	d        *Detector
	pid      int // the process the reports name
	mu       sync.Mutex
	sym      symbolizer
	sup      *suppressions // nil: none
	files    reportFiles
	contexts map[[2]uint32]*racyContext
	reports  int // printed
	races    int // racy contexts found, printed or not, suppressed ones excepted
	// lock-order inversions reported (lockorder_report.go)
	inversions int
}

func (r *reporter) init(d *Detector, exe string, pid int) {
	r.d = d
	r.pid = pid
	if pid == 0 {
		r.pid = os.Getpid()
	}
	r.contexts = map[[2]uint32]*racyContext{}
	r.sym.init(exe, d.host, d.bias, r.pid)
	r.files.init(d.opts.JSONPath, d.opts.SARIFPath, r.pid)
}

// loadSuppressions reads the suppressions file named by the options (it
// is read at start-up, so that a mistake in it is told at once).
func (r *reporter) loadSuppressions(path string) error {
	if path == "" {
		return nil
	}
	sup, err := readSuppressions(path)
	if err != nil {
		return err
	}
	r.sup = sup
	return nil
}

// accessKind names an access for reports: "read", "write", "read-write"
// or "free".
func accessKind(flags uint8) string {
	if flags&accessFree != 0 {
		return "free"
	}
	if flags&abi.Write != 0 {
		if flags&abi.Read != 0 {
			return "read-write"
		}
		return "write"
	}
	return "read"
}

// race reports that t's access made a location enter Race. prev is the
// packed previous access from the shadow cell (shadow.PackAccess; 0 if none
// was recorded), prevClock the clock count of its segment (0 if not
// known: calltrace.go). The report waits in t.pending for the thread's stack
// (emit), unless halt_on_error prints it and ends the process.
func (r *reporter) race(t *thread, addr, size uint64, pc uint32, flags uint8, prev, prevClock uint64, cell msm.Cell) {
	if r.d.benign.covers(addr, size) {
		return // declared benign by the program (benign.go)
	}
	ppc, ptid, pflags, psize, _ := shadow.UnpackAccess(prev)
	r.mu.Lock()
	defer r.mu.Unlock()
	key := contextKey(pc, ppc)
	ctx := r.contexts[key]
	if ctx != nil && !ctx.another() {
		return
	}
	rep := &raceReport{Kind: kindRace, Pid: r.pid, Addr: addr, Verdict: r.verdict(t, cell), pc: pc, sp: t.accessSP}
	rep.Accesses = append(rep.Accesses, reportAccess{Kind: accessKind(flags), Size: size, TID: t.tid,
		Stack: r.sym.frames(uint64(pc))})
	rep.traced = r.currentCallers(t, pc)
	var callers []Frame
	if prev != 0 {
		callers = r.previousCallers(int32(ptid), ppc, prevClock)
		stack := append(r.sym.frames(uint64(ppc)), callers...)
		rep.Accesses = append(rep.Accesses, reportAccess{Kind: accessKind(pflags), Size: psize, TID: int32(ptid), Stack: stack})
	}
	if !r.count(key, ctx, stackKey(rep.traced, callers)) {
		return
	}
	rep.Location = r.location(addr)
	rep.Locks = r.locksHeld(t, flags)
	rep.Threads = append(rep.Threads, r.threadInfo(t.tid))
	if prev != 0 && int32(ptid) != t.tid {
		rep.Threads = append(rep.Threads, r.threadInfo(int32(ptid)))
	}
	if r.d.opts.HaltOnError {
		if r.publish(rep) {
			r.summaryLocked()
			r.files.close()
			r.d.host.Halt(r.d.opts.ExitCode)
		}
		return
	}
	// The report is finished by emit, once the thread's stack is known.
	t.pending = append(t.pending, rep)
	t.npending.Store(int32(len(t.pending)))
}

// wouldPrint says whether a race between the code locations pc and ppc
// may be printed: its context is new, or may show other stacks, and
// max_reports is not reached.
func (r *reporter) wouldPrint(pc, ppc uint32) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.contexts[contextKey(pc, ppc)].open() && !r.full()
}

// contextKey is the racy context of the code locations pc and ppc,
// unordered.
func contextKey(pc, ppc uint32) [2]uint32 { return [2]uint32{min(pc, ppc), max(pc, ppc)} }

// full says whether max_reports reports were printed. The caller holds
// r.mu.
func (r *reporter) full() bool {
	return r.d.opts.MaxReports > 0 && r.reports >= r.d.opts.MaxReports
}

// A racy context is the unordered pair of code locations of a race's two
// accesses. It is reported once for each pair of call stacks it is seen
// with (as ThreadSanitizer does): one function racing with itself, called
// from two places, is two races. The stacks are told apart by the
// callers the call traces restore (calltrace.go), which costs a replay of
// two traces: a context is looked at again stackTries times at most, and
// only stacks whose callers are all known count as different.
type racyContext struct {
	stacks map[uint64]bool // the stacks reported, by stackKey
	tries  int             // races of the context looked at after its first
}

const stackTries = 16

// open says whether a race of context c (nil: new) is to be looked at.
func (c *racyContext) open() bool { return c == nil || c.tries < stackTries }

// another says whether one more race of a context seen before is to be
// looked at, and counts it.
func (c *racyContext) another() bool {
	if !c.open() {
		return false
	}
	c.tries++
	return true
}

// count counts a race of the racy context key (ctx: nil when new), whose
// stacks are sk (stackKey), and says whether it is a new race to print: a
// new context, or one seen with other stacks (max_reports permitting). A
// context first reported without both stacks' callers is not reported
// again: its other stacks may be the same. The caller holds r.mu.
func (r *reporter) count(key [2]uint32, ctx *racyContext, sk uint64) bool {
	if ctx == nil {
		ctx = &racyContext{stacks: map[uint64]bool{}}
		if sk == 0 {
			ctx.tries = stackTries
		}
		r.contexts[key] = ctx
	} else if sk == 0 || ctx.stacks[sk] {
		return false
	}
	if sk != 0 {
		ctx.stacks[sk] = true
	}
	r.races++
	if r.full() {
		return false
	}
	r.reports++
	return true
}

// stackKey identifies the callers of a race's two accesses as the call
// traces restored them (in either order: the same race may be found
// from either side), or is 0 when either has none.
func stackKey(cur, prev []Frame) uint64 {
	if len(cur) == 0 || len(prev) == 0 {
		return 0
	}
	a, b := framesKey(cur), framesKey(prev)
	if a > b {
		a, b = b, a
	}
	return a*31 + b | 1
}

// framesKey hashes the code addresses of frames.
func framesKey(frames []Frame) uint64 {
	h := fnv.New64a()
	var b [8]byte
	for _, f := range frames {
		binary.LittleEndian.PutUint64(b[:], f.PC)
		h.Write(b[:])
	}
	return h.Sum64()
}

// publish writes a finished report, unless a suppression matches it: a
// suppressed report is not counted (it changes no exit status). It
// reports whether the report was written. The caller holds r.mu.
func (r *reporter) publish(rep *raceReport) bool {
	if r.sup.match(rep) {
		if rep.Kind == kindRace {
			r.races--
			r.reports--
		}
		return false
	}
	r.d.host.Print(rep.text())
	r.files.add(rep)
	return true
}

// verdict names the state machine and the state the location is in, and
// with verbosity the segments that were found unordered.
func (r *reporter) verdict(t *thread, cell msm.Cell) string {
	v := "Detected by MSM-" + r.d.opts.MSM + ": the location is now in state " + cell.State.String() + "."
	if r.d.opts.Verbosity > 0 {
		pt := epochTID(cell.TS)
		v += fmt.Sprintf("\n  Last ordered segment T%d@%d; T%d has seen T%d up to %d.", pt, uint64(cell.TS)&shadow.CellClockMask,
			t.tid, pt, t.vc.Get(pt))
	}
	return v
}

// pendingCount is the number of t's reports waiting for a stack. Every
// flush asks, so it reads the count without the reporter's lock, which
// all threads would contend for (2% of bench/locks.c's samples).
func (r *reporter) pendingCount(t *thread) int {
	return int(t.npending.Load())
}

// Stack prints thread tid's pending reports with its call stack, as the
// C side captured it at the thread's first interposed call after Flush or
// Free returned a pending count.
func (d *Detector) Stack(tid int32, stack CallStack) {
	if t := d.thread(tid); t != nil {
		d.lockOrderStack(t, stack.RA)
		d.rep.emit(t, stack)
	}
}

// emit prints t's pending reports. stack is the thread's call stack at
// its first interposed call after the accesses were checked (empty at
// exit). Reports found when the buffer filled up inside instrumented code
// wait for that call: trampolines have no unwind information. Where the
// function that made the access is still on that stack, its callers are
// the access's (accessCallers); otherwise they come from the thread's
// call trace, read when the race was found (calltrace.go), and failing
// that the report shows the later stack as what it is.
func (r *reporter) emit(t *thread, stack CallStack) {
	r.mu.Lock()
	defer r.mu.Unlock()
	pending := t.pending
	t.pending = nil
	t.npending.Store(0)
	if len(pending) == 0 {
		return
	}
	later := r.stackFrames(stack.RA)
	for _, rep := range pending {
		switch i := r.accessCallers(stack, rep.sp, rep.pc); {
		case i >= 0 && len(rep.Accesses) > 0:
			rep.Accesses[0].Stack = append(rep.Accesses[0].Stack, r.framesFrom(stack.RA[i:], true)...)
		case len(rep.traced) > 0 && len(rep.Accesses) > 0:
			rep.Accesses[0].Stack = append(rep.Accesses[0].Stack, rep.traced...)
		default:
			rep.Later = later
		}
		r.publish(rep)
	}
}

// stackFrames symbolises a call stack of return addresses: frames in the
// runtime library are dropped, and so are those below the program's main
// (as ThreadSanitizer's stacks end there); each return address is moved
// back into its call, and a frame of the program may stand for several
// inlined functions.
func (r *reporter) stackFrames(stack []uint64) []Frame {
	return r.framesFrom(stack, false)
}

// framesFrom is stackFrames; started says the stack's innermost frames
// are the program's already (a stack cut below the access's frame), so
// that the first frame of the runtime met is where the thread began.
func (r *reporter) framesFrom(stack []uint64, started bool) []Frame {
	var out []Frame
	for _, ra := range stack {
		if r.d.host.InRuntime(ra) {
			if started {
				break // the runtime's own threads start below the program
			}
			continue
		}
		started = true
		if lp := r.d.host.LinkPC(ra); lp != 0 {
			out = append(out, r.sym.frames(lp-1)...)
			if out[len(out)-1].Func == "main" {
				break // what calls main is the C library's start-up, the same in every report
			}
		} else {
			lib := r.sym.libFrames(ra - 1)
			if strings.HasPrefix(lib[len(lib)-1].Func, "__libc_start") {
				break // below main, in a program whose main has no name
			}
			out = append(out, lib...)
		}
	}
	return out
}

// location describes the memory at addr: a global of the program, a live
// heap block, or neither.
func (r *reporter) location(addr uint64) reportLocation {
	link := addr - r.d.bias
	if name, off, size, ok := r.sym.global(link); ok {
		return reportLocation{Kind: "global", Addr: addr, Name: name, Offset: off, Size: size,
			Module: r.sym.module(), ModuleOffset: link}
	}
	if start, blk, ok := r.d.heap.find(addr); ok {
		loc := reportLocation{Kind: "heap", Addr: start, Offset: addr - start, Size: blk.size, AllocTID: blk.tid}
		if blk.pc != 0 {
			loc.Alloc = r.sym.frames(blk.pc)
		}
		return loc
	}
	if sec, off, named, ok := r.sym.section(link); ok {
		return reportLocation{Kind: "section", Addr: addr, Name: sec, Offset: off, Module: r.sym.module(),
			ModuleOffset: link, Stripped: !named}
	}
	return reportLocation{Kind: "other", Addr: addr, Module: r.sym.module()}
}

// locksHeld lists the locks t holds that guard the access: all of them
// for a read, those held in write mode for a write.
func (r *reporter) locksHeld(t *thread, flags uint8) []reportLock {
	id := t.held
	if flags&abi.Write != 0 {
		id = t.writeHeld
	}
	var out []reportLock
	for _, l := range r.d.locks.Members(id) {
		lk := reportLock{Addr: l}
		if name, _, _, ok := r.sym.global(l - r.d.bias); ok {
			lk.Name = name
		}
		out = append(out, lk)
	}
	return out
}

// threadInfo describes thread tid for a report: its name, its creation,
// and the earlier threads that had its id.
func (r *reporter) threadInfo(tid int32) reportThread {
	info := reportThread{TID: tid, Parent: -1, Name: r.d.threadName(tid)}
	t := r.d.thread(tid)
	if t == nil {
		return info
	}
	info.Main = tid == 0
	info.Parent = t.parent
	info.Created = r.creationFrames(t.createStack, t.createPC)
	info.Earlier = t.earlier
	for _, p := range t.past {
		info.Past = append(info.Past, reportThread{TID: tid, Parent: p.parent, Name: p.name,
			Created: r.creationFrames(p.createStack, p.createPC)})
	}
	return info
}

// creationFrames is a thread's creation stack: the creator's whole stack
// when the C side captured it, else the pthread_create call alone (a
// link-time pc inside the call), else nothing.
func (r *reporter) creationFrames(stack []uint64, pc uint64) []Frame {
	switch {
	case len(stack) > 0:
		return r.stackFrames(stack)
	case pc != 0:
		return r.sym.frames(pc)
	}
	return nil
}

// summary prints the exit summary, finishes the report files and returns
// the number of reports that count for the exit status: racy contexts
// and lock-order inversions.
func (r *reporter) summary() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.summaryLocked()
	r.files.close()
	return n
}

func (r *reporter) summaryLocked() int {
	if r.races > 0 {
		extra := ""
		if r.races > r.reports {
			extra = fmt.Sprintf(" (%d printed, max_reports=%d)", r.reports, r.d.opts.MaxReports)
		}
		r.d.host.Print(fmt.Sprintf("SUMMARY: hgrewrite: %d data race(s) reported in %s%s\n", r.races, r.sym.module(), extra))
	}
	if r.inversions > 0 {
		r.d.host.Print(fmt.Sprintf("SUMMARY: hgrewrite: %d lock-order inversion(s) (potential deadlocks) reported in %s\n",
			r.inversions, r.sym.module()))
	}
	if r.sup != nil && (r.d.opts.Verbosity > 0 || r.d.opts.Stats) {
		r.d.host.Print(r.sup.used())
	}
	if err := r.files.err(); err != nil {
		r.d.host.Print("hgrewrite: " + err.Error() + "\n")
	}
	return r.races + r.inversions
}
