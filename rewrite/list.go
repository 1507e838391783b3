package rewrite

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"hgrewrite/cfg"
	"hgrewrite/disasm"
	"hgrewrite/elfrw"
	"hgrewrite/loops"
)

// ListLoops prints the wait-enclosing and spinning-read loops lr found
// in g, a graph of bin (the --list-loops listing), and with stats their
// counts.
func ListLoops(w io.Writer, bin *elfrw.Binary, g *cfg.Graph, lr *loops.Result, stats bool) {
	names := dataNames(bin)
	for _, wl := range lr.Waits {
		l := &lr.Loops[wl.Loop]
		fmt.Fprintf(w, "wait loop in %s %s:\n", funcName(g, l.Func), loopRange(g, l))
		for _, c := range wl.Waits {
			fmt.Fprintf(w, "  wait %s at %#x\n    condition variable: %s\n    mutex/lock:         %s\n",
				c.Callee, c.Addr, describeValue(c.CV, names), describeValue(c.Mutex, names))
		}
		fmt.Fprintf(w, "  exits: %s\n", exitList(g, l.Exits))
		if len(wl.Guards) > 0 {
			fmt.Fprintf(w, "  skipped by: %s\n", exitList(g, wl.Guards))
		}
	}
	for _, sl := range lr.Spins {
		l := &lr.Loops[sl.Loop]
		fmt.Fprintf(w, "spinning-read loop in %s %s:\n", funcName(g, l.Func), loopRange(g, l))
		for i, a := range sl.Loads {
			cond := ""
			if i < len(sl.Conds) {
				cond = sl.Conds[i]
			}
			in, _ := g.Inst(a)
			if in != nil && in.Flags&disasm.RIPRel != 0 {
				if n := names(in.Target); n != "" {
					cond += " = " + n
				}
			}
			fmt.Fprintf(w, "  condition load at %#x: %s\n", a, cond)
		}
		for _, a := range sl.GuardLoads {
			fmt.Fprintf(w, "  load before the loop at %#x (the loop is skipped when it sees the write)\n", a)
		}
	}
	if stats {
		s := lr.Stats
		fmt.Fprintf(w, "loops: %d, wait-enclosing: %d, spinning-read: %d (small loops rejected as spinning: %d)\n",
			s.Loops, s.WaitLoops, s.SpinLoops, s.Rejected)
	}
}

func funcName(g *cfg.Graph, fi int) string {
	if fi < 0 || fi >= len(g.Funcs) {
		return "?"
	}
	if n := g.Funcs[fi].Name; n != "" {
		return n
	}
	return fmt.Sprintf("func_%x", g.Funcs[fi].Start)
}

func loopRange(g *cfg.Graph, l *loops.Loop) string {
	lo, hi := ^uint64(0), uint64(0)
	for _, b := range l.Blocks {
		lo, hi = min(lo, g.Blocks[b].Start), max(hi, g.Blocks[b].End)
	}
	return fmt.Sprintf("(%#x-%#x, header %#x, %d blocks, depth %d)", lo, hi, l.Header, len(l.Blocks), l.Depth)
}

func exitList(g *cfg.Graph, exits []loops.Exit) string {
	var parts []string
	for _, e := range exits {
		how := "falls through"
		if e.Branch {
			how = "branches"
		}
		parts = append(parts, fmt.Sprintf("%#x %s to %#x", g.Blocks[e.From].Start, how, e.To))
	}
	return strings.Join(parts, "; ")
}

func describeValue(v loops.Value, names func(uint64) string) string {
	var s string
	switch v.Kind {
	case loops.Const:
		s = fmt.Sprintf("constant %#x", v.Addr)
		if n := names(v.Addr); n != "" {
			s += " (&" + n + ")"
		}
	case loops.RegPlus:
		s = fmt.Sprintf("%%%s%+#x, unchanged in the loop", strings.ToLower(v.Reg.String()), v.Disp)
	case loops.Load, loops.LoadPlus:
		if v.Reg == 0 {
			s = fmt.Sprintf("loaded from %#x", v.Addr)
			if n := names(v.Addr); n != "" {
				s += " (" + n + ")"
			}
		} else {
			s = fmt.Sprintf("loaded from %#x(%%%s), unchanged in the loop", v.Disp, strings.ToLower(v.Reg.String()))
		}
		if v.Kind == loops.LoadPlus {
			s += fmt.Sprintf(", plus %#x", v.Add)
		}
	default:
		s = "unknown"
	}
	if v.Why != "" {
		s += " [" + v.Why + "]"
	}
	return s
}

// dataNames names link-time data addresses by the symbol containing them.
func dataNames(bin *elfrw.Binary) func(uint64) string {
	type sym struct {
		name       string
		addr, size uint64
	}
	var syms []sym
	for _, s := range bin.Symbols {
		if !s.Func && s.Name != "" {
			syms = append(syms, sym{s.Name, s.Addr, s.Size})
		}
	}
	sort.Slice(syms, func(i, j int) bool { return syms[i].addr < syms[j].addr })
	return func(a uint64) string {
		i := sort.Search(len(syms), func(i int) bool { return syms[i].addr > a }) - 1
		if i < 0 {
			return ""
		}
		s := syms[i]
		switch {
		case a == s.addr:
			return s.name
		case a < s.addr+s.size:
			return fmt.Sprintf("%s+%d", s.name, a-s.addr)
		}
		return ""
	}
}

// CFGDump is one Graphviz file of --dump-cfg.
type CFGDump struct {
	File string // its name, unique per function
	Dot  string // its content
}

// CFGDumps renders the graph of every function that holds a wait or
// spinning-read loop, in function order.
func CFGDumps(g *cfg.Graph, lr *loops.Result) []CFGDump {
	funcs := map[int]bool{}
	for _, w := range lr.Waits {
		funcs[lr.Loops[w.Loop].Func] = true
	}
	for _, s := range lr.Spins {
		funcs[lr.Loops[s.Loop].Func] = true
	}
	var out []CFGDump
	for _, fi := range sortedKeys(funcs) {
		out = append(out, CFGDump{File: dumpName(g, fi), Dot: lr.Dot(g, fi)})
	}
	return out
}

// dumpName is the file name of function fi's graph: its name made safe
// for a file name and short enough, and its address to keep it unique.
func dumpName(g *cfg.Graph, fi int) string {
	name := strings.Map(func(r rune) rune {
		if r == '/' || r == 0 {
			return '_'
		}
		return r
	}, funcName(g, fi))
	if len(name) > 120 {
		name = name[:120]
	}
	return fmt.Sprintf("%s_%x.dot", name, g.Funcs[fi].Start)
}
