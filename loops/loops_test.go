package loops_test

import (
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"golang.org/x/arch/x86/x86asm"

	"hgrewrite/disasm"
	"hgrewrite/loops"
)

var opts = []string{"-O0", "-O2"}

const cxxWait = "_ZNSt18condition_variable4waitERSt11unique_lockISt5mutexE"

func TestIsWait(t *testing.T) {
	yes := []string{
		"pthread_cond_wait", "pthread_cond_timedwait", "pthread_cond_clockwait",
		"pthread_cond_wait@GLIBC_2.3.2", "pthread_cond_timedwait@@GLIBC_2.3.2", "cnd_wait", "cnd_timedwait",
		cxxWait, cxxWait + "@GLIBCXX_3.4.30",
		// wait_until / wait_for / predicate waits instantiated in programs
		"_ZNSt18condition_variable10wait_untilINSt6chrono8durationIlSt5ratioILl1ELl1000000000EEEEEESt9cv_statusRSt11unique_lockISt5mutexERKNS1_10time_pointINS1_3_V212steady_clockET_EE",
		"_ZNSt18condition_variable4waitIZ13cxx_wait_predvEUlvE_EEvRSt11unique_lockISt5mutexET_",
		"_ZNSt18condition_variable17__wait_until_implINSt6chrono3_V212steady_clockENS1_8durationIlSt5ratioILl1ELl1000000000EEEEEESt9cv_statusRSt11unique_lockISt5mutexERKNS1_10time_pointIT_T0_EE",
		"_ZNSt3_V222condition_variable_any4waitISt11unique_lockISt5mutexEEEvRT_",
		"_ZNSt3__118condition_variable4waitERNS_11unique_lockINS_5mutexEEE", // libc++
	}
	no := []string{
		"", "pthread_cond_signal", "pthread_cond_broadcast", "pthread_mutex_lock", "pthread_cond_init",
		"_ZNSt18condition_variable10notify_allEv", "_ZNSt18condition_variableC1Ev", "_ZNSt18condition_variableD1Ev",
		"_ZNSt22condition_variable_anyC1Ev", "_ZSt25notify_all_at_thread_exitRSt18condition_variableSt11unique_lockISt5mutexE",
		"pthread_cond_wait_helper", "my_pthread_cond_wait", "_ZNSt18condition_variable",
	}
	for _, n := range yes {
		if !loops.IsWait(n) {
			t.Errorf("IsWait(%q) = false", n)
		}
	}
	for _, n := range no {
		if loops.IsWait(n) {
			t.Errorf("IsWait(%q) = true", n)
		}
	}
}

// TestNaturalLoops checks the structural invariants of every loop found.
func TestNaturalLoops(t *testing.T) {
	for _, src := range []string{"wait.c", "spin.c", "cv_wait_pred.cpp"} {
		for _, opt := range opts {
			p := compile(t, src, opt)
			g := p.in.Graph
			if p.res.Stats.Loops != len(p.res.Loops) || p.res.Stats.Loops == 0 {
				t.Fatalf("%s: stats %+v, %d loops", p.name, p.res.Stats, len(p.res.Loops))
			}
			for li, L := range p.res.Loops {
				in := map[int]bool{}
				bytes := 0
				for k, b := range L.Blocks {
					in[b] = true
					bytes += int(g.Blocks[b].End - g.Blocks[b].Start)
					if k > 0 && L.Blocks[k-1] >= b {
						t.Errorf("%s loop %d: blocks not sorted", p.name, li)
					}
					if g.Blocks[b].Func != L.Func {
						t.Errorf("%s loop %d: block 0x%x of another function", p.name, li, g.Blocks[b].Start)
					}
				}
				h := g.BlockAt(L.Header)
				if !in[h] || g.Blocks[h].Start != L.Header {
					t.Errorf("%s loop %d: header 0x%x not a loop block", p.name, li, L.Header)
				}
				if bytes != L.Bytes {
					t.Errorf("%s loop %d: Bytes %d, blocks add up to %d", p.name, li, L.Bytes, bytes)
				}
				// Some block of the loop jumps back to the header.
				back := false
				for b := range in {
					for _, s := range g.Blocks[b].Succs {
						back = back || s == L.Header
					}
				}
				if !back {
					t.Errorf("%s loop %d: no back edge to 0x%x", p.name, li, L.Header)
				}
				for k, e := range L.Exits {
					if !in[e.From] {
						t.Errorf("%s loop %d: exit from a block outside the loop", p.name, li)
					}
					if tb := g.BlockAt(e.To); tb >= 0 && in[tb] && g.Blocks[tb].Start == e.To {
						t.Errorf("%s loop %d: exit to 0x%x inside the loop", p.name, li, e.To)
					}
					last := g.Sections[g.Blocks[e.From].Sec].Insts[g.Blocks[e.From].Last]
					if e.Branch && e.To != last.Target || !e.Branch && e.To != g.Blocks[e.From].End {
						t.Errorf("%s loop %d: exit %+v does not match the jump at 0x%x", p.name, li, e, last.Addr)
					}
					if k > 0 && (L.Exits[k-1].From > e.From || L.Exits[k-1].From == e.From && L.Exits[k-1].To > e.To) {
						t.Errorf("%s loop %d: exits not sorted", p.name, li)
					}
				}
				if L.Parent < 0 {
					if L.Depth != 1 {
						t.Errorf("%s loop %d: outermost with depth %d", p.name, li, L.Depth)
					}
					continue
				}
				P := p.res.Loops[L.Parent]
				if P.Depth != L.Depth-1 || len(P.Blocks) <= len(L.Blocks) {
					t.Errorf("%s loop %d: parent %d depth %d/%d size %d/%d", p.name, li, L.Parent, P.Depth, L.Depth, len(P.Blocks), len(L.Blocks))
				}
				pin := map[int]bool{}
				for _, b := range P.Blocks {
					pin[b] = true
				}
				for b := range in {
					if !pin[b] {
						t.Errorf("%s loop %d: block 0x%x not in parent %d", p.name, li, g.Blocks[b].Start, L.Parent)
					}
				}
			}
		}
	}
}

// waitCase describes the one wait loop a function must have.
type waitCase struct {
	fn     string
	callee string
	cv, mu string // symbols the arguments must be Const addresses of ("" = not checked)
	exits  int    // minimum number of exit edges
}

func TestWaitLoops(t *testing.T) {
	cases := []waitCase{
		{"wait_basic", "pthread_cond_wait", "cv", "mu", 1},   // -O0: test at the bottom, entered by a jump; -O2: rotated, test duplicated before the loop
		{"wait_dowhile", "pthread_cond_wait", "cv", "mu", 1}, // condition only at the bottom
		{"wait_or", "pthread_cond_wait", "cv", "mu", 1},      // while (!fa || !fb): both tests jump back into the body
		{"wait_and", "pthread_cond_wait", "cv2", "mu", 2},    // while (fa && fb): two conditional exits
		{"wait_func", "pthread_cond_wait", "cv", "mu", 1},    // while (!is_set())
		{"wait_timed", "pthread_cond_timedwait", "cv", "mu", 2},
		{"wait_wrapped", "my_cond_wait", "cv", "mu", 1}, // a wrapper of the binary
	}
	for _, opt := range opts {
		p := compile(t, "wait.c", opt)
		for _, c := range cases {
			fis := p.funcs(c.fn)
			ws := p.waitsIn(fis)
			if len(ws) != 1 || len(ws[0].Waits) != 1 {
				t.Errorf("%s %s: want one wait loop with one wait:\n%s", p.name, c.fn, p.dump(fis))
				continue
			}
			w := ws[0].Waits[0]
			if w.Callee != c.callee || w.Import == "" || !loops.IsWait(w.Import) {
				t.Errorf("%s %s: callee %q import %q, want %q", p.name, c.fn, w.Callee, w.Import, c.callee)
			}
			checkConst(t, p, c.fn+" cv", w.CV, c.cv)
			checkConst(t, p, c.fn+" mutex", w.Mutex, c.mu)
			if L := p.res.Loops[ws[0].Loop]; len(L.Exits) < c.exits {
				t.Errorf("%s %s: %d exits, want at least %d", p.name, c.fn, len(L.Exits), c.exits)
			}
		}
		if w := p.waitsIn(p.funcs("my_cond_wait")); len(w) != 0 {
			t.Errorf("%s: the wrapper itself has no loop, got %d wait loops", p.name, len(w))
		}
		// A wait call without a loop, and a loop without a wait call.
		for _, fn := range []string{"wait_once", "no_wait_loop"} {
			if w := p.waitsIn(p.funcs(fn)); len(w) != 0 {
				t.Errorf("%s %s: unexpected wait loops:\n%s", p.name, fn, p.dump(p.funcs(fn)))
			}
		}
		if len(p.loopsIn(p.funcs("no_wait_loop"))) != 1 {
			t.Errorf("%s no_wait_loop: want one loop:\n%s", p.name, p.dump(p.funcs("no_wait_loop")))
		}
	}
}

func checkConst(t *testing.T, p *prog, what string, v loops.Value, sym string) {
	t.Helper()
	if sym == "" {
		return
	}
	if want := p.sym(t, sym); v.Kind != loops.Const || v.Addr != want {
		t.Errorf("%s %s: %v (%+v), want Const 0x%x (%s)", p.name, what, v, v, want, sym)
	}
}

// TestWaitNested: listing 6.5. The innermost loop around the wait is
// reported, and so is each enclosing loop (within the size limits) that
// adds exits of its own: at -O0 the three source loops; at -O2 gcc merges
// `while (this_)` and `while (that_)` into one loop with one header, so two.
func TestWaitNested(t *testing.T) {
	want := map[string]int{"-O0": 3, "-O2": 2}
	for _, opt := range opts {
		p := compile(t, "wait.c", opt)
		fis := p.funcs("wait_nested")
		ws := p.waitsIn(fis)
		if len(ws) != want[opt] {
			t.Errorf("%s: %d wait loops, want %d:\n%s", p.name, len(ws), want[opt], p.dump(fis))
			continue
		}
		depths := map[int]bool{}
		for _, w := range ws {
			depths[p.res.Loops[w.Loop].Depth] = true
			if len(w.Waits) != 1 {
				t.Errorf("%s: loop %d has %d waits", p.name, w.Loop, len(w.Waits))
				continue
			}
			checkConst(t, p, "wait_nested cv", w.Waits[0].CV, "cv")
		}
		if !depths[1] || !depths[want[opt]] {
			t.Errorf("%s: wait loops at depths %v", p.name, depths)
		}
	}
}

// TestWaitStruct: the condition variable and mutex are fields of a
// structure passed in: -O0 reloads the pointer from its stack slot and adds
// the field offset (LoadPlus); -O2 keeps field addresses in callee-saved
// registers (RegPlus).
func TestWaitStruct(t *testing.T) {
	for _, opt := range opts {
		p := compile(t, "wait.c", opt)
		fis := p.funcs("wait_struct")
		ws := p.waitsIn(fis)
		if len(ws) != 1 || len(ws[0].Waits) != 1 {
			t.Fatalf("%s: want one wait loop:\n%s", p.name, p.dump(fis))
		}
		w := ws[0].Waits[0]
		switch opt {
		case "-O0":
			if w.CV.Kind != loops.LoadPlus || w.CV.Reg != x86asm.RBP || w.CV.Add != 0x30 ||
				w.Mutex.Kind != loops.LoadPlus || w.Mutex.Reg != x86asm.RBP || w.Mutex.Add != 0x8 || w.CV.Disp != w.Mutex.Disp {
				t.Errorf("%s: cv %+v mutex %+v", p.name, w.CV, w.Mutex)
			}
		case "-O2":
			if w.CV.Kind != loops.RegPlus || !calleeSaved(w.CV.Reg) || w.Mutex.Kind != loops.RegPlus || !calleeSaved(w.Mutex.Reg) {
				t.Errorf("%s: cv %+v mutex %+v", p.name, w.CV, w.Mutex)
			}
		}
	}
}

func calleeSaved(r x86asm.Reg) bool {
	switch r {
	case x86asm.RBX, x86asm.RBP, x86asm.R12, x86asm.R13, x86asm.R14, x86asm.R15, x86asm.RSP:
		return true
	}
	return false
}

// TestCxxWaits: std::condition_variable and std::condition_variable_any.
// At -O2 the predicate wait is inlined into the function and wait_for /
// wait_until down to pthread_cond_clockwait; at -O0 the loops are in the
// template instances made for the function's lambdas (their mangled names
// contain the function's name) and call the non-predicate wait, or for
// wait_for/wait_until the wait_until template of the program.
func TestCxxWaits(t *testing.T) {
	type want struct {
		callee string // "" = a libstdc++ wait template of the program
		cv, mu string
	}
	cases := map[string]map[string]want{
		"-O0": {
			"cxx_wait_loop":    {cxxWait, "cv", ""},
			"cxx_wait_pred":    {cxxWait, "", ""},
			"cxx_wait_for":     {"", "", ""},
			"cxx_wait_until":   {"", "cv", ""},
			"cxx_wait_any":     {"", "", ""},
			"cxx_wait_any_for": {"", "", ""},
		},
		"-O2": {
			"cxx_wait_loop":    {cxxWait, "cv", ""},
			"cxx_wait_pred":    {cxxWait, "cv", ""},
			"cxx_wait_for":     {"pthread_cond_clockwait", "cv", "m"},
			"cxx_wait_until":   {"pthread_cond_clockwait", "cv", "m"},
			"cxx_wait_any":     {cxxWait, "cva", ""},
			"cxx_wait_any_for": {"pthread_cond_clockwait", "cva", ""},
		},
	}
	for _, opt := range opts {
		p := compile(t, "cv_wait_pred.cpp", opt)
		for fn, c := range cases[opt] {
			fis := p.funcs(fn)
			ws := p.waitsIn(fis)
			if len(ws) != 1 || len(ws[0].Waits) != 1 {
				t.Errorf("%s %s: want one wait loop with one wait:\n%s", p.name, fn, p.dump(fis))
				continue
			}
			w := ws[0].Waits[0]
			if c.callee != "" && w.Callee != c.callee ||
				c.callee == "" && !(strings.HasPrefix(w.Callee, "_ZNSt") && loops.IsWait(w.Callee) && w.Callee != cxxWait) {
				t.Errorf("%s %s: callee %s", p.name, fn, w.Callee)
			}
			checkConst(t, p, fn+" cv", w.CV, c.cv)
			checkConst(t, p, fn+" mutex", w.Mutex, c.mu)
			if w.CV.Kind == loops.Unknown {
				t.Errorf("%s %s: cv unknown: %s", p.name, fn, w.CV.Why)
			}
			if w.Mutex.Kind == loops.Unknown {
				t.Errorf("%s %s: mutex unknown: %s", p.name, fn, w.Mutex.Why)
			}
			if w.Callee == cxxWait && w.Mutex.Kind == loops.RegPlus && w.Mutex.Reg != x86asm.RSP && w.Mutex.Reg != x86asm.RBP {
				t.Errorf("%s %s: the unique_lock is on the stack, got %v", p.name, fn, w.Mutex)
			}
		}
	}
}

// TestNoSpuriousWaits: a wait loop always contains a wait call, functions
// that call no wait have none, and spin.c has none at all.
func TestNoSpuriousWaits(t *testing.T) {
	for _, src := range []string{"wait.c", "spin.c", "cv_wait_pred.cpp"} {
		for _, opt := range opts {
			p := compile(t, src, opt)
			g := p.in.Graph
			seen := map[int]bool{}
			for _, w := range p.res.Waits {
				L := p.res.Loops[w.Loop]
				if seen[w.Loop] {
					t.Errorf("%s: loop %d reported twice", p.name, w.Loop)
				}
				seen[w.Loop] = true
				if len(w.Waits) == 0 {
					t.Errorf("%s: wait loop %d without waits", p.name, w.Loop)
				}
				blocks := map[int]bool{}
				for _, b := range L.Blocks {
					blocks[b] = true
				}
				for _, c := range w.Waits {
					in, ok := g.Inst(c.Addr)
					if !ok || !blocks[g.BlockAt(c.Addr)] || in.Kind != disasm.Call && in.Kind != disasm.CallInd {
						t.Errorf("%s: wait 0x%x is not a call in loop %d", p.name, c.Addr, w.Loop)
					}
					if !loops.IsWait(c.Callee) && c.Callee != "my_cond_wait" {
						t.Errorf("%s: wait 0x%x calls %s", p.name, c.Addr, c.Callee)
					}
				}
				if len(L.Blocks) > loops.DefaultWaitBlocks || L.Bytes > loops.DefaultWaitBytes {
					t.Errorf("%s: wait loop %d is too large", p.name, w.Loop)
				}
				for _, s := range p.res.Spins {
					if s.Loop == w.Loop {
						t.Errorf("%s: loop %d is both a wait and a spin loop", p.name, w.Loop)
					}
				}
			}
			if src == "spin.c" && len(p.res.Waits) != 0 {
				t.Errorf("%s: %d wait loops", p.name, len(p.res.Waits))
			}
		}
	}
}

// TestDeterministic: the same input gives the same result.
func TestDeterministic(t *testing.T) {
	for _, src := range []string{"wait.c", "spin.c", "cv_wait_pred.cpp"} {
		for _, opt := range opts {
			p := compile(t, src, opt)
			again := loops.Analyze(p.in, loops.Options{})
			if !reflect.DeepEqual(p.res, again) {
				t.Errorf("%s: a second Analyze differs", p.name)
			}
		}
	}
}

// spinCase describes a function that must have a spinning-read loop.
type spinCase struct {
	fn     string
	consts []string // symbols that must be in Consts
	callee string   // a function one of the Loads must be in
	cond   string   // a substring of one of the Conds
}

func TestSpinLoops(t *testing.T) {
	cases := []spinCase{
		{fn: "spin_flag", consts: []string{"flag"}},
		{fn: "spin_yield", consts: []string{"spinlock"}}, // figure 7.6
		{fn: "spin_sleep", consts: []string{"flag3"}},
		{fn: "spin_field", cond: "0x8("}, // p->ready, p invariant (-O0: reloaded from its stack slot)
		{fn: "ttas_lock", consts: []string{"lk"}},
		{fn: "barrier_wait", consts: []string{"sense"}},
		{fn: "spin_callee", consts: []string{"rflag"}, callee: "is_ready"},
		{fn: "spin_callee_arg", callee: "field_ready", cond: "0x8("},
		{fn: "spin_atomic", consts: []string{"aflag"}},
		{fn: "spin_dowhile", consts: []string{"COND"}}, // figure 7.10, found at -O0 through the stack copy of c
	}
	for _, opt := range opts {
		p := compile(t, "spin.c", opt)
		for _, c := range cases {
			fis := p.funcs(c.fn)
			ss := p.spinsIn(fis)
			if len(ss) != 1 {
				t.Errorf("%s %s: want one spin loop:\n%s", p.name, c.fn, p.dump(fis))
				continue
			}
			s := ss[0]
			for _, name := range c.consts {
				if a := p.sym(t, name); !slices.Contains(s.Consts, a) {
					t.Errorf("%s %s: Consts %x lack %s (0x%x)", p.name, c.fn, s.Consts, name, a)
				}
			}
			if len(s.Loads) == 0 || len(s.Conds) != len(s.Loads) || !sort.SliceIsSorted(s.Loads, func(i, j int) bool { return s.Loads[i] < s.Loads[j] }) {
				t.Errorf("%s %s: loads %x conds %q", p.name, c.fn, s.Loads, s.Conds)
			}
			loopFuncs := append([]int(nil), fis...)
			if c.callee != "" {
				loopFuncs = append(loopFuncs, p.funcs(c.callee)...)
			}
			for _, ld := range s.Loads {
				f := p.in.Graph.Blocks[p.in.Graph.BlockAt(ld)].Func
				if !slices.Contains(loopFuncs, f) {
					t.Errorf("%s %s: load 0x%x in %s", p.name, c.fn, ld, p.in.Graph.Funcs[f].Name)
				}
				if c.callee != "" && !slices.Contains(p.funcs(c.callee), f) {
					t.Errorf("%s %s: load 0x%x not in the callee %s", p.name, c.fn, ld, c.callee)
				}
				in, _ := p.in.Graph.Inst(ld)
				if in.Flags&disasm.HasMem == 0 || in.Mem.Access&disasm.Read == 0 {
					t.Errorf("%s %s: 0x%x is not a load", p.name, c.fn, ld)
				}
			}
			if c.cond != "" && !strings.Contains(strings.Join(s.Conds, " "), c.cond) {
				t.Errorf("%s %s: conds %q lack %q", p.name, c.fn, s.Conds, c.cond)
			}
			for _, gl := range s.GuardLoads {
				in, _ := p.in.Graph.Inst(gl)
				if in == nil || in.Flags&disasm.RIPRel != 0 && !slices.Contains(s.Consts, in.Target) {
					t.Errorf("%s %s: guard load 0x%x does not read a condition variable", p.name, c.fn, gl)
				}
			}
		}
		// Figure 7.6 rotated by the optimiser: `if (spinlock) do yield();
		// while (spinlock);` reads spinlock once before the loop too.
		if strings.Contains(p.name, "O2") {
			ss := p.spinsIn(p.funcs("spin_yield"))
			if len(ss) != 1 || len(ss[0].GuardLoads) != 1 {
				t.Errorf("%s spin_yield: want one guard load:\n%s", p.name, p.dump(p.funcs("spin_yield")))
			}
		}
		// TTAS: the inner read loop spins, the outer xchg loop writes lk.
		ttas := p.funcs("ttas_lock")
		if ls := p.loopsIn(ttas); len(ls) != 2 {
			t.Errorf("%s ttas_lock: %d loops:\n%s", p.name, len(ls), p.dump(ttas))
		} else if ss := p.spinsIn(ttas); len(ss) == 1 && p.res.Loops[ss[0].Loop].Depth != 2 {
			t.Errorf("%s ttas_lock: the spin loop is not the inner one:\n%s", p.name, p.dump(ttas))
		}
	}
}

// TestSpinVarLoads: the loads of a global spin variable are its spinning
// loop's condition loads and its reads elsewhere, and nothing else.
func TestSpinVarLoads(t *testing.T) {
	for _, opt := range opts {
		p := compile(t, "spin.c", opt)
		flag := p.sym(t, "flag")
		got := loops.SpinVarLoads(p.in, []loops.Var{{Addr: flag, Size: 4}})
		for _, a := range got {
			in, ok := p.in.Graph.Inst(a)
			if !ok || in.Flags&disasm.RIPRel == 0 || in.Target != flag || in.Mem.Access&disasm.Write != 0 {
				t.Errorf("%s: 0x%x is no load of flag", p.name, a)
			}
		}
		ss := p.spinsIn(p.funcs("spin_flag"))
		if len(ss) != 1 {
			t.Fatalf("%s: spin_flag has %d spin loops", p.name, len(ss))
		}
		for _, ld := range ss[0].Loads {
			if in, _ := p.in.Graph.Inst(ld); in.Flags&disasm.RIPRel != 0 && !slices.Contains(got, ld) {
				t.Errorf("%s: condition load 0x%x missing from %x", p.name, ld, got)
			}
		}
		peek := p.funcs("peek_flag")
		found := false
		for _, a := range got {
			found = found || slices.Contains(peek, p.in.Graph.Blocks[p.in.Graph.BlockAt(a)].Func)
		}
		if !found {
			t.Errorf("%s: peek_flag's load of flag missing from %x:\n%s", p.name, got, p.dump(peek))
		}
	}
}

// TestNotSpinning: loops whose exit condition changes in the loop, or
// whose condition memory the loop writes.
func TestNotSpinning(t *testing.T) {
	cases := map[string]string{
		"list_walk":     "address", // figure 7.8/7.9: the load address changes
		"count_sum":     "loop-carried",
		"copy_loop":     "loop-carried",
		"writes_flag":   "writes",
		"callee_writes": "writes", // the callee take() writes tflag
		"tas_lock":      "writes", // xchg reads and writes lk: not a spinning read
	}
	for _, opt := range opts {
		p := compile(t, "spin.c", opt)
		for fn, why := range cases {
			fis := p.funcs(fn)
			ls := p.loopsIn(fis)
			if len(ls) == 0 {
				t.Errorf("%s %s: no loop found", p.name, fn)
				continue
			}
			if ss := p.spinsIn(fis); len(ss) != 0 {
				t.Errorf("%s %s: unexpected spin loop:\n%s", p.name, fn, p.dump(fis))
				continue
			}
			found := false
			for _, li := range ls {
				found = found || strings.Contains(p.res.Rejections[li], why)
			}
			if !found {
				t.Errorf("%s %s: rejected, but not because of %q:\n%s", p.name, fn, why, p.dump(fis))
			}
		}
		if p.res.Stats.Rejected != len(p.res.Rejections) || p.res.Stats.SpinLoops != len(p.res.Spins) {
			t.Errorf("%s: stats %+v", p.name, p.res.Stats)
		}
	}
}

// TestOptions: the size limits apply.
func TestOptions(t *testing.T) {
	p := compile(t, "wait.c", "-O2")
	r := loops.Analyze(p.in, loops.Options{WaitBlocks: 1})
	for _, w := range r.Waits {
		if len(r.Loops[w.Loop].Blocks) > 1 {
			t.Errorf("WaitBlocks 1: loop %d has %d blocks", w.Loop, len(r.Loops[w.Loop].Blocks))
		}
	}
	if r2 := loops.Analyze(p.in, loops.Options{WaitBytes: 8}); len(r2.Waits) != 0 {
		t.Errorf("WaitBytes 8: %d wait loops", len(r2.Waits))
	}
	s := compile(t, "spin.c", "-O2")
	r = loops.Analyze(s.in, loops.Options{SpinBlocks: 1})
	for _, sl := range r.Spins {
		if len(r.Loops[sl.Loop].Blocks) > 1 {
			t.Errorf("SpinBlocks 1: spin loop with %d blocks", len(r.Loops[sl.Loop].Blocks))
		}
	}
	if r = loops.Analyze(s.in, loops.Options{CalleeInsts: 1}); len(loops.Analyze(s.in, loops.Options{}).Spins) <= len(r.Spins) {
		t.Errorf("CalleeInsts 1 should lose the spins through callees")
	}
	noDec := s.in
	noDec.Decode = nil
	if r = loops.Analyze(noDec, loops.Options{}); len(r.Spins) != 0 || len(r.Loops) != len(s.res.Loops) {
		t.Errorf("without a decoder: %d spins, %d loops", len(r.Spins), len(r.Loops))
	}
}

func TestDot(t *testing.T) {
	p := compile(t, "wait.c", "-O2")
	fi := p.funcs("wait_basic")[0]
	d := p.res.Dot(p.in.Graph, fi)
	for _, want := range []string{"digraph", "lightblue", "label=exit", "pthread_cond_wait", "peripheries=2"} {
		if !strings.Contains(d, want) {
			t.Errorf("Dot(wait_basic) lacks %q:\n%s", want, d)
		}
	}
	s := compile(t, "spin.c", "-O2")
	d = s.res.Dot(s.in.Graph, s.funcs("spin_flag")[0])
	if !strings.Contains(d, "orange") || !strings.Contains(d, "spin:") {
		t.Errorf("Dot(spin_flag):\n%s", d)
	}
	if d := s.res.Dot(s.in.Graph, -1); !strings.Contains(d, "digraph") {
		t.Errorf("Dot(-1) = %q", d)
	}
}

func TestIsNotifyAndLockArg(t *testing.T) {
	for _, n := range []string{"pthread_cond_signal", "pthread_cond_broadcast@GLIBC_2.3.2", "cnd_signal",
		"_ZNSt18condition_variable10notify_oneEv", "_ZNSt18condition_variable10notify_allEv",
		"_ZNSt3_V222condition_variable_any10notify_allEv"} {
		if !loops.IsNotify(n) {
			t.Errorf("IsNotify(%q) = false", n)
		}
	}
	for _, n := range []string{"pthread_cond_wait", "_ZNSt18condition_variableC1Ev", "notify", "pthread_mutex_lock"} {
		if loops.IsNotify(n) {
			t.Errorf("IsNotify(%q) = true", n)
		}
	}
	locks := map[string]x86asm.Reg{
		"pthread_mutex_lock":                  x86asm.RDI,
		"pthread_mutex_lock@GLIBC_2.2.5":      x86asm.RDI,
		"_ZNSt5mutex4lockEv":                  x86asm.RDI,
		"_ZNSt10lock_guardISt5mutexEC2ERS0_":  x86asm.RSI,
		"_ZNSt11unique_lockISt5mutexEC1ERS0_": x86asm.RSI,
	}
	for n, want := range locks {
		if r, ok := loops.LockArg(n); !ok || r != want {
			t.Errorf("LockArg(%q) = %v, %v; want %v", n, r, ok, want)
		}
	}
	for _, n := range []string{"pthread_mutex_unlock", "_ZNSt11unique_lockISt5mutexED1Ev", "pthread_cond_wait"} {
		if _, ok := loops.LockArg(n); ok {
			t.Errorf("LockArg(%q) = ok", n)
		}
	}
}
