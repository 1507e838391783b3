package loops

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

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
	local int // local block
	idx   int // instruction index in the block
	addr  uint64
	name  string
}

// waitSites lists the wait calls of local block l.
func (a *analyzer) waitSites(fg *fgraph, l int) []waitSite {
	g := a.g
	b := &g.Blocks[fg.blocks[l]]
	var out []waitSite
	for i, in := range g.Insts(b) {
		if name := a.callName(&in); name != "" && IsWait(name) {
			out = append(out, waitSite{local: l, idx: i, addr: in.Addr, name: name})
		}
	}
	return out
}

// callName names the target of a call: an import through the PLT or the
// GOT, or a function of the binary by its symbol. "" if unknown.
func (a *analyzer) callName(in *disasm.Inst) string {
	switch in.Kind {
	case disasm.Call:
		if name, ok := a.in.PLT[in.Target]; ok {
			return name
		}
		if fi := a.funcAt(in.Target); fi >= 0 {
			return a.g.Funcs[fi].Name
		}
	case disasm.CallInd:
		if in.Flags&disasm.RIPRel != 0 {
			return a.in.GOT[in.Target]
		}
	}
	return ""
}

// funcAt returns the function starting at addr, or -1.
func (a *analyzer) funcAt(addr uint64) int {
	fs := a.g.Funcs
	i := sort.Search(len(fs), func(i int) bool { return fs[i].Start >= addr })
	if i < len(fs) && fs[i].Start == addr {
		return i
	}
	return -1
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
		if ci := a.funcAt(c); ci >= 0 && IsWait(a.g.Funcs[ci].Name) {
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
			if !hasWait(lp) {
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
					wc := WaitCall{Addr: s.addr, Callee: s.name}
					wc.CV = tr.argValue(rDI, s)
					wc.Mutex = tr.argValue(rSI, s)
					wl.Waits = append(wl.Waits, wc)
				}
			}
			sort.Slice(wl.Waits, func(i, j int) bool { return wl.Waits[i].Addr < wl.Waits[j].Addr })
			a.res.Waits = append(a.res.Waits, wl)
		}
	}
	// Spinning-read loops.
	if a.in.Decode == nil {
		return
	}
	for _, lp := range loops {
		if len(lp.body) > a.opt.SpinBlocks || hasWait(lp) {
			continue
		}
		if sl, why := a.spin(fg, lp); why == "" {
			a.res.Spins = append(a.res.Spins, sl)
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
