package loops

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/arch/x86/x86asm"

	"hgrewrite/disasm"
)

// waitImports are the C library's condition waits.
var waitImports = map[string]bool{
	"pthread_cond_wait": true, "pthread_cond_timedwait": true, "pthread_cond_clockwait": true,
	"__pthread_cond_wait": true, "__pthread_cond_timedwait": true, "__pthread_cond_clockwait": true,
	"pthread_cond_reltimedwait_np": true,
	"cnd_wait":                     true, "cnd_timedwait": true, // C11 threads
}

// cvClasses are the mangled prefixes of the C++ condition-variable classes
// whose members named wait* / __wait* are condition waits: libstdc++'s
// std::condition_variable (std::condition_variable::wait(unique_lock&) is
// exported by libstdc++.so; wait_for/wait_until/__wait_until_impl and the
// predicate forms are templates instantiated in the program) and
// std::condition_variable_any (std::_V2:: since GCC 11), and libc++'s.
var cvClasses = []string{
	"_ZNSt18condition_variable",
	"_ZNSt22condition_variable_any",
	"_ZNSt3_V222condition_variable_any",
	"_ZNSt3__118condition_variable",
	"_ZNSt3__122condition_variable_any",
}

// IsWait reports whether name, an imported function or a program symbol,
// is a condition wait: pthread_cond_wait, pthread_cond_timedwait,
// pthread_cond_clockwait, cnd_wait, cnd_timedwait, or a wait* / __wait*
// member of std::condition_variable or std::condition_variable_any
// (libstdc++ and libc++ manglings). A symbol version ("@GLIBC_2.3.2") is
// ignored.
// IsNotify reports whether an imported name signals a condition
// variable: pthread_cond_signal/broadcast, C11 cnd_signal/broadcast, or a
// notify member of std::condition_variable(_any).
func IsNotify(name string) bool {
	if i := strings.IndexByte(name, '@'); i >= 0 {
		name = name[:i]
	}
	switch name {
	case "pthread_cond_signal", "pthread_cond_broadcast", "cnd_signal", "cnd_broadcast":
		return true
	}
	for _, c := range cvClasses {
		if rest, ok := strings.CutPrefix(name, c); ok && (strings.HasPrefix(rest, "10notify_one") || strings.HasPrefix(rest, "10notify_all")) {
			return true
		}
	}
	return false
}

// LockArg says which argument register of a call to name holds a mutex
// being locked: pthread_mutex_lock and std::mutex::lock take it first;
// the std::lock_guard and std::unique_lock constructors (out-of-line
// without optimisation) second. ok is false for other functions.
func LockArg(name string) (x86asm.Reg, bool) {
	if i := strings.IndexByte(name, '@'); i >= 0 {
		name = name[:i]
	}
	switch {
	case name == "pthread_mutex_lock" || name == "pthread_mutex_timedlock" || name == "_ZNSt5mutex4lockEv":
		return x86asm.RDI, true
	case strings.HasPrefix(name, "_ZNSt10lock_guardISt5mutexEC") || strings.HasPrefix(name, "_ZNSt11unique_lockISt5mutexEC"):
		return x86asm.RSI, strings.HasSuffix(name, "ERS0_")
	}
	return 0, false
}

func IsWait(name string) bool {
	if i := strings.IndexByte(name, '@'); i >= 0 {
		name = name[:i]
	}
	if waitImports[name] {
		return true
	}
	for _, c := range cvClasses {
		if !strings.HasPrefix(name, c) {
			continue
		}
		rest := name[len(c):]
		// The next component must be a source name: <length><identifier>.
		j := 0
		for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		if j == 0 {
			continue
		}
		n, err := strconv.Atoi(rest[:j])
		if err != nil || j+n > len(rest) {
			continue
		}
		id := rest[j : j+n]
		if strings.HasPrefix(id, "wait") || strings.HasPrefix(id, "__wait") || strings.HasPrefix(id, "__do_timed_wait") {
			return true
		}
	}
	return false
}

// waitSite is a call to a condition wait.
type waitSite struct {
	local   int // local block
	idx     int // instruction index in the block
	addr    uint64
	name    string
	import_ string
}

// waitSites lists the wait calls of local block l.
func (a *analyzer) waitSites(fg *fgraph, l int) []waitSite {
	g := a.g
	b := &g.Blocks[fg.blocks[l]]
	var out []waitSite
	for i := range g.Insts(b) {
		in := &g.Insts(b)[i]
		if name, imp := a.waitTarget(in); name != "" {
			out = append(out, waitSite{local: l, idx: i, addr: in.Addr, name: name, import_: imp})
		}
	}
	return out
}

// waitTarget says whether instruction in calls (or tail-calls) a condition
// wait: an IsWait import or program symbol, or a wrapper found by
// findWrappers. It returns the callee's name and the wait it amounts to.
func (a *analyzer) waitTarget(in *disasm.Inst) (name, imp string) {
	switch in.Kind {
	case disasm.Call, disasm.Jmp:
		if n, ok := a.in.PLT[in.Target]; ok {
			if IsWait(n) {
				return n, n
			}
			return "", ""
		}
		if in.Kind == disasm.Jmp && !a.isFuncStart(in.Target) {
			return "", ""
		}
		if w, ok := a.wrappers[in.Target]; ok {
			return w.name, w.imp
		}
	case disasm.CallInd:
		if in.Flags&disasm.RIPRel != 0 {
			if n := a.in.GOT[in.Target]; n != "" && IsWait(n) {
				return n, n
			}
		}
	}
	return "", ""
}

func (a *analyzer) isFuncStart(addr uint64) bool { return a.funcAt(addr) >= 0 }

// funcAt returns the function starting at addr, or -1.
func (a *analyzer) funcAt(addr uint64) int {
	fs := a.g.Funcs
	i := sort.Search(len(fs), func(i int) bool { return fs[i].Start >= addr })
	if i < len(fs) && fs[i].Start == addr {
		return i
	}
	return -1
}

// wrapper is a function of the binary that is a condition wait.
type wrapper struct {
	name string // its symbol
	imp  string // the wait it amounts to
}

// maxWrapperInsts bounds the functions findWrappers looks at.
const maxWrapperInsts = 64

// findWrappers finds the functions of the binary that are condition waits:
// those IsWait recognises by name (libstdc++'s wait templates), and small
// loop-free functions that call a wait with their own first two arguments
// (e.g. libuv's uv_cond_wait(cond, mutex), which calls pthread_cond_wait
// and aborts on error), wrappers of wrappers included.
func (a *analyzer) findWrappers() {
	g := a.g
	a.wrappers = map[uint64]wrapper{}
	for _, f := range g.Funcs {
		if f.Name != "" && IsWait(f.Name) {
			a.wrappers[f.Start] = wrapper{name: f.Name, imp: f.Name}
		}
	}
	if a.in.Decode == nil {
		return
	}
	for round := 0; round < 3; round++ {
		changed := false
		for fi := range g.Funcs {
			f := &g.Funcs[fi]
			if _, ok := a.wrappers[f.Start]; ok || len(f.Blocks) == 0 || !a.mayWait(fi) {
				continue
			}
			n := 0
			for _, b := range f.Blocks {
				n += g.Blocks[b].Last - g.Blocks[b].First + 1
			}
			if n > maxWrapperInsts {
				continue
			}
			fg := a.buildFunc(fi)
			if imp := a.wrapperOf(fg); imp != "" {
				name := f.Name
				if name == "" {
					name = fmt.Sprintf("0x%x", f.Start)
				}
				a.wrappers[f.Start] = wrapper{name: name, imp: imp}
				changed = true
			}
			fg.release(a)
		}
		if !changed {
			break
		}
	}
}

// wrapperOf returns the wait a loop-free function amounts to if it calls
// one with its own rdi and rsi, else "".
func (a *analyzer) wrapperOf(fg *fgraph) string {
	for _, v := range fg.rpo {
		for _, s := range fg.succ[v] {
			if fg.dominates(s, v) {
				return "" // has a loop
			}
		}
	}
	tr := a.newTracer(fg, nil)
	tr.entryRegs = true
	for l := range fg.blocks {
		for _, site := range a.waitSites(fg, l) {
			tr.budget = 1000
			cv := tr.trace(texpr{reg: rDI}, site.local, site.idx, false, pstate{})
			tr.budget = 1000
			mu := tr.trace(texpr{reg: rSI}, site.local, site.idx, false, pstate{})
			if isEntry(cv, x86asm.RDI) && isEntry(mu, x86asm.RSI) {
				return site.import_
			}
		}
	}
	return ""
}

func isEntry(r tres, reg x86asm.Reg) bool {
	return !r.top && r.v.Kind == entryReg && r.v.Reg == reg && r.v.Disp == 0
}

// mayWait is a cheap filter: does the function call any condition wait?
func (a *analyzer) mayWait(fi int) bool {
	f := &a.g.Funcs[fi]
	for _, name := range f.Imports {
		if IsWait(name) {
			return true
		}
	}
	for _, c := range f.Callees {
		if _, ok := a.wrappers[c]; ok {
			return true
		}
	}
	return false
}

// classify finds the wait loops and the spinning-read loops among the
// function's loops (sorted by header).
func (a *analyzer) classify(fg *fgraph, loops []*floop) {
	var sites map[int][]waitSite // local block -> wait calls
	if a.mayWait(fg.fi) {
		sites = map[int][]waitSite{}
		for _, lp := range loops {
			for _, v := range lp.body {
				if _, ok := sites[v]; !ok {
					sites[v] = a.waitSites(fg, v)
				}
			}
		}
	}
	hasWait := func(lp *floop) bool {
		for _, v := range lp.body {
			if len(sites[v]) > 0 {
				return true
			}
		}
		return false
	}
	// Wait loops, innermost first (children have fewer blocks).
	byIndex := map[int]*floop{}
	for _, lp := range loops {
		byIndex[lp.index] = lp
	}
	var reported []int
	if sites != nil {
		order := append([]*floop(nil), loops...)
		sort.SliceStable(order, func(i, j int) bool { return len(order[i].body) < len(order[j].body) })
		for _, lp := range order {
			if !hasWait(lp) || lp.sub {
				continue
			}
			L := &a.res.Loops[lp.index]
			if len(L.Blocks) > a.opt.WaitBlocks || L.Bytes > a.opt.WaitBytes {
				continue
			}
			if !a.addsWaitExits(lp.index, reported) {
				continue
			}
			reported = append(reported, lp.index)
		}
		sort.Ints(reported)
		for _, li := range reported {
			lp := byIndex[li]
			wl := WaitLoop{Loop: li}
			tr := a.newTracer(fg, lp)
			for _, v := range lp.body {
				for _, s := range sites[v] {
					wc := WaitCall{Addr: s.addr, Callee: s.name, Import: s.import_}
					wc.CV = tr.argValue(rDI, s)
					wc.Mutex = tr.argValue(rSI, s)
					wl.Waits = append(wl.Waits, wc)
				}
			}
			sort.Slice(wl.Waits, func(i, j int) bool { return wl.Waits[i].Addr < wl.Waits[j].Addr })
			wl.Guards = a.guards(fg, lp, false)
			a.res.Waits = append(a.res.Waits, wl)
		}
	}
	// Spinning-read loops.
	if a.in.Decode == nil {
		return
	}
	spinHeader := map[int]bool{} // merged loops come before their sub-loops
	for _, lp := range loops {
		if len(lp.body) > a.opt.SpinBlocks || hasWait(lp) || lp.sub && spinHeader[lp.header] {
			continue
		}
		if sl, why := a.spin(fg, lp); why == "" {
			sl.GuardLoads = a.guardLoads(fg, lp, sl.Loads)
			a.res.Spins = append(a.res.Spins, sl)
			spinHeader[lp.header] = true
		} else {
			a.res.Stats.Rejected++
			a.res.Rejections[lp.index] = why
		}
	}
}

// addsWaitExits decides whether loop li, which contains a wait call, is
// reported given the wait loops already reported (all smaller): it is if
// no reported loop is nested in it (it is the innermost loop around some
// wait), or if it has an exit edge that none of the reported loops nested
// in it has.
func (a *analyzer) addsWaitExits(li int, reported []int) bool {
	L := &a.res.Loops[li]
	inner := map[Exit]bool{}
	nested := false
	for _, r := range reported {
		if !a.nestedIn(r, li) {
			continue
		}
		nested = true
		for _, e := range a.res.Loops[r].Exits {
			inner[e] = true
		}
	}
	if !nested {
		return true
	}
	for _, e := range L.Exits {
		if !inner[e] {
			return true
		}
	}
	return false
}

// nestedIn reports whether loop r is nested in loop o.
func (a *analyzer) nestedIn(r, o int) bool {
	for p := a.res.Loops[r].Parent; p >= 0; p = a.res.Loops[p].Parent {
		if p == o {
			return true
		}
	}
	return false
}

// String renders a Value for listings.
func (v Value) String() string {
	switch v.Kind {
	case Const:
		return fmt.Sprintf("0x%x", v.Addr)
	case RegPlus:
		return fmt.Sprintf("%%%s%+#x", strings.ToLower(v.Reg.String()), v.Disp)
	case Load, LoadPlus:
		var s string
		if v.Reg == 0 {
			s = fmt.Sprintf("*0x%x", v.Addr)
		} else {
			s = fmt.Sprintf("*(%%%s%+#x)", strings.ToLower(v.Reg.String()), v.Disp)
		}
		if v.Kind == LoadPlus {
			s += fmt.Sprintf("%+#x", v.Add)
		}
		return s
	}
	return "?"
}

// guards finds the conditional jumps that skip loop lp (see
// WaitLoop.Guards): a block outside the loop ending in a conditional jump
// with one side reaching the header through at most guardChain blocks
// outside the loop that have a single successor (the preheader), and the
// other side going to an exit target of the loop (or, with anySide,
// anywhere else).
func (a *analyzer) guards(fg *fgraph, lp *floop, anySide bool) []Exit {
	const guardChain = 3
	g := a.g
	L := &a.res.Loops[lp.index]
	inLoop := map[int]bool{}
	for _, v := range lp.body {
		inLoop[v] = true
	}
	targets := map[uint64]bool{}
	for _, e := range L.Exits {
		targets[e.To] = true
	}
	// Walk back from the header through single-successor blocks; the
	// other side of the guard may reach the exit target through a few
	// blocks of its own (gcc emits `jmp exit` blocks).
	var out []Exit
	seen := map[int]bool{}
	frontier := []int{lp.header}
	for step := 0; step <= guardChain && len(frontier) > 0; step++ {
		var next []int
		for _, v := range frontier {
			for _, p := range fg.pred[v] {
				if inLoop[p] || seen[p] {
					continue
				}
				seen[p] = true
				bi := fg.blocks[p]
				b := &g.Blocks[bi]
				last := &g.Sections[b.Sec].Insts[b.Last]
				if last.Kind == disasm.Jcc && len(b.Succs) == 2 {
					for k, s := range b.Succs {
						if a.localAt(b.Succs[1-k]) == v && (a.reachesExit(fg, s, targets, inLoop) || anySide && a.localAt(s) != v) {
							out = append(out, Exit{From: bi, To: s, Branch: k == 0})
						}
					}
					continue
				}
				if len(fg.succ[p]) == 1 {
					next = append(next, p)
				}
			}
		}
		frontier = next
	}
	sort.Slice(out, func(i, j int) bool { return out[i].From < out[j].From })
	return out
}

// reachesExit reports whether control at addr arrives at one of the exit
// targets through at most a few blocks outside the loop with a single
// successor each.
func (a *analyzer) reachesExit(fg *fgraph, addr uint64, targets map[uint64]bool, inLoop map[int]bool) bool {
	for step := 0; step < 4; step++ {
		if targets[addr] {
			return true
		}
		l := a.localAt(addr)
		if l < 0 || inLoop[l] || len(fg.succ[l]) != 1 {
			return false
		}
		b := &a.g.Blocks[fg.blocks[l]]
		if b.Start != addr || len(b.Succs) != 1 {
			return false
		}
		last := &a.g.Sections[b.Sec].Insts[b.Last]
		if last.Kind != disasm.Jmp && last.Kind != disasm.Nop && last.Kind != disasm.Other {
			return false
		}
		addr = b.Succs[0]
	}
	return false
}

// guardLoads finds, in the blocks whose conditional jump skips the loop
// (guards), the loads from the same address as one of the loop's
// condition loads (the same rip-relative target, or the same address
// expression).
func (a *analyzer) guardLoads(fg *fgraph, lp *floop, loads []uint64) []uint64 {
	g := a.g
	var conds []*disasm.Inst
	for _, l := range loads {
		if in, ok := g.Inst(l); ok && in.Flags&disasm.HasMem != 0 {
			conds = append(conds, in)
		}
	}
	same := func(x, y *disasm.Inst) bool {
		if x.Flags&disasm.RIPRel != 0 || y.Flags&disasm.RIPRel != 0 {
			return x.Flags&y.Flags&disasm.RIPRel != 0 && x.Target == y.Target
		}
		return x.Mem.Base == y.Mem.Base && x.Mem.Index == y.Mem.Index && x.Mem.Scale == y.Mem.Scale && x.Mem.Disp == y.Mem.Disp
	}
	var out []uint64
	// The skipping side may go anywhere: the load must read a condition
	// variable, which ties the jump to the loop.
	for _, e := range a.guards(fg, lp, true) {
		for i, in := range g.Insts(&g.Blocks[e.From]) {
			if in.Flags&disasm.HasMem == 0 || in.Mem.Access&(disasm.Read|disasm.Write) != disasm.Read {
				continue
			}
			for _, c := range conds {
				if same(&g.Insts(&g.Blocks[e.From])[i], c) {
					out = append(out, in.Addr)
					break
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
