package loops

import "fmt"

// The abstract values of the spinning-read analysis (spin.go): what a
// location holds in one iteration of the loop (sv), symbolically in terms of
// the loop entry (sym), and the spin loads it depends on (loadRec).

// symKind says what a sym is relative to.
type symKind uint8

const (
	symOpaque symKind = iota // invariant, value not known symbolically
	symConst                 // off
	symReg                   // register reg at the loop entry + off
	symSlot                  // 8-byte stack slot [reg+k] at the loop entry + off
)

// sym is a value in terms of the loop entry: a constant, or a register or
// stack slot as it was when the loop was entered, plus off.
type sym struct {
	kind symKind
	reg  int
	k    int64
	off  int64
}

// shift adds d to a known symbolic value.
func (s sym) shift(d int64) sym {
	if s.kind != symOpaque {
		s.off += d
	}
	return s
}

func (s sym) String() string {
	switch s.kind {
	case symConst:
		return fmt.Sprintf("0x%x", uint64(s.off))
	case symReg:
		return fmt.Sprintf("%#x(%%%s)", s.off, regName(s.reg))
	case symSlot:
		return fmt.Sprintf("%#x(*%#x(%%%s))", s.off, s.k, regName(s.reg))
	}
	return "?"
}

// sv is the abstract value of a location in one iteration.
type sv struct {
	bad   string // non-empty: not usable (loop-carried, unknown...), with the reason
	loads []int  // spin loads it depends on
	s     sym    // its symbolic value when it depends on no load
}

func badf(format string, args ...any) sv { return sv{bad: fmt.Sprintf(format, args...)} }

func constv(k int64) sv { return sv{s: sym{kind: symConst, off: k}} }

// join combines the dependencies of two operands; the symbolic value is
// lost.
func join(a, b sv) sv {
	if a.bad != "" {
		return a
	}
	if b.bad != "" {
		return b
	}
	out := sv{loads: append([]int(nil), a.loads...)}
	for _, l := range b.loads {
		if !containsInt(out.loads, l) {
			out.loads = append(out.loads, l)
		}
	}
	return out
}

// merge combines the values reaching a point along different paths.
func merge(a, b sv) sv {
	out := join(a, b)
	if out.bad == "" && len(out.loads) == 0 && a.s == b.s {
		out.s = a.s
	}
	return out
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// locKind says what a loc is.
type locKind uint8

const (
	lReg locKind = iota
	lFlags
	lSlot
)

// loc is what is sliced: a register, the flags, or a stack slot.
type loc struct {
	kind locKind
	reg  int // register, or the slot's base
	disp int64
	size int64
}

func (q loc) String() string {
	switch q.kind {
	case lFlags:
		return "flags"
	case lSlot:
		return fmt.Sprintf("%#x(%%%s)", q.disp, regName(q.reg))
	}
	return regName(q.reg)
}

// loadRec is a spin load: a load of non-stack memory a condition depends on.
type loadRec struct {
	addr uint64 // the load instruction
	a    sym    // the address it reads
	size int64
	rip  bool
	fn   string // callee it is in, "" for the loop
}

// desc renders the load for SpinLoop.Conds and rejection reasons.
func (l loadRec) desc() string {
	s := l.a.String()
	if l.a.kind == symOpaque {
		s = fmt.Sprintf("load at 0x%x", l.addr)
	}
	if l.rip {
		s += " (rip)"
	}
	if l.fn != "" {
		s += " in " + l.fn
	}
	return s
}

// symStore is a store of the loop (or its callees) to address a.
type symStore struct {
	a    sym
	size int64
}
