package loops

import (
	"fmt"
	"sort"

	"golang.org/x/arch/x86/x86asm"

	"hgrewrite/disasm"
)

// The spinning-read analysis (dissertation, algorithm 3) slices every exit
// condition of a small loop backwards through one iteration: from the
// conditional jump to the flags it reads, to the instruction that set them,
// to that instruction's operands, and so on, through registers, stack slots
// and the return value of small callees, until it reaches a load of
// (non-stack) memory, a constant, or the loop header. A value that reaches
// the header is from the loop entry if nothing in the loop writes it
// (invariant), else from the previous iteration (loop-carried: the loop is
// not spinning). Loads are the spin reads; their addresses must be
// invariant, and nothing in the loop (or in the callees it calls) may store
// to them.
//
// This file holds the decision (spin) and the check that the loop does not
// write what its conditions read; spinvalue.go the abstract values,
// spineval.go the backward evaluator that computes them, callee.go the
// summaries of the small callees the evaluator looks into.

// spin decides whether lp is a spinning-read loop; why says why not.
func (a *analyzer) spin(fg *fgraph, lp *floop) (SpinLoop, string) {
	sa := &spinAn{a: a, loadAt: map[uint64]int{}, budget: 20000, visiting: map[visitSpin]bool{}}
	fr := &frame{sa: sa, fg: fg, inLoop: map[int]bool{}, header: lp.header, entry: -1, fp: fg.fp}
	for _, v := range lp.body {
		fr.inLoop[v] = true
	}
	for _, v := range lp.body {
		insts := fr.insts(v)
		for i := range insts {
			in := &insts[i]
			x := a.inst(in)
			w := regWrites(in, x)
			if in.Kind == disasm.Call {
				w = a.callClobbers(in)
			}
			fr.writes |= w
			for _, s := range memWrites(in, x) {
				if s.base == rSP || s.base == rBP && fr.fp {
					fr.slots = append(fr.slots, s)
				}
			}
		}
	}
	fr.rspOK = fr.writes&(1<<rSP) == 0
	L := &a.res.Loops[lp.index]
	if len(L.Exits) == 0 {
		return SpinLoop{}, "no exit"
	}
	// 1. The exit conditions and what they depend on.
	var cond sv
	done := map[int]bool{}
	for _, e := range L.Exits {
		if done[e.From] {
			continue
		}
		done[e.From] = true
		l := int(a.local[e.From])
		insts := fr.insts(l)
		last := &insts[len(insts)-1]
		if last.Kind != disasm.Jcc {
			return SpinLoop{}, fmt.Sprintf("exit from 0x%x is not a conditional jump", last.Addr)
		}
		var v sv
		x := a.inst(last)
		switch {
		case x == nil:
			v = badf("undecoded jump")
		case x.Op == x86asm.JCXZ || x.Op == x86asm.JECXZ || x.Op == x86asm.JRCXZ:
			v = fr.eval(loc{kind: lReg, reg: rCX}, l, len(insts)-1)
		case x.Op == x86asm.LOOP || x.Op == x86asm.LOOPE || x.Op == x86asm.LOOPNE:
			v = badf("loop instruction counts rcx down")
		case x.Op == x86asm.XBEGIN:
			v = badf("transaction")
		default:
			v = fr.eval(loc{kind: lFlags}, l, len(insts)-1)
		}
		if v.bad != "" {
			return SpinLoop{}, fmt.Sprintf("condition at 0x%x: %s", last.Addr, v.bad)
		}
		cond = join(cond, v)
	}
	if len(cond.loads) == 0 {
		return SpinLoop{}, "the exit conditions depend on no load"
	}
	// 2. Nothing in the loop may write what the conditions read.
	stores, why := fr.stores(lp.body)
	if why != "" {
		return SpinLoop{}, why
	}
	for _, id := range cond.loads {
		ld := sa.loads[id]
		for _, st := range stores {
			if mayAlias(ld.a, ld.size, st.a, st.size) {
				return SpinLoop{}, fmt.Sprintf("the loop writes %s, which its condition reads", ld.desc())
			}
		}
	}
	// 3. A spinning-read loop.
	sl := SpinLoop{Loop: lp.index}
	var tr *tracer
	consts := map[uint64]bool{}
	sort.Slice(cond.loads, func(i, j int) bool { return sa.loads[cond.loads[i]].addr < sa.loads[cond.loads[j]].addr })
	for _, id := range cond.loads {
		ld := sa.loads[id]
		sl.Loads = append(sl.Loads, ld.addr)
		d := ld.desc()
		switch ld.a.kind {
		case symConst:
			consts[uint64(ld.a.off)] = true
		case symReg, symSlot:
			// A register or slot set before the loop to a fixed address.
			if tr == nil {
				tr = a.newTracer(fg, lp)
			}
			e := texpr{reg: ld.a.reg}
			if ld.a.kind == symSlot {
				e = texpr{mem: true, reg: ld.a.reg, disp: ld.a.k}
			}
			tr.budget = 2000
			if r := tr.trace(e, lp.header, 0, true, pstate{}); !r.top && r.v.Kind == Const {
				c := r.v.Addr + uint64(ld.a.off)
				consts[c] = true
				d += fmt.Sprintf(" = 0x%x", c)
			}
		}
		sl.Conds = append(sl.Conds, d)
	}
	for c := range consts {
		sl.Consts = append(sl.Consts, c)
	}
	sort.Slice(sl.Consts, func(i, j int) bool { return sl.Consts[i] < sl.Consts[j] })
	return sl, ""
}

// mayAlias reports whether two accesses may overlap. Accesses through
// different known bases (a fixed address, different invariant registers
// or stack slots) are assumed not to; an access whose address is not known
// symbolically (indexed, computed) may overlap anything.
func mayAlias(a sym, as int64, b sym, bs int64) bool {
	if a.kind == symOpaque || b.kind == symOpaque {
		return true
	}
	if a.kind != b.kind || a.reg != b.reg || a.k != b.k {
		return false
	}
	if as <= 0 {
		as = 1
	}
	if bs <= 0 {
		bs = 1
	}
	return a.off < b.off+bs && b.off < a.off+as
}

// stores evaluates the addresses of the memory that blocks of fr, and the
// callees they call, write (stack slots aside).
func (fr *frame) stores(blocks []int) ([]symStore, string) {
	a := fr.sa.a
	var out []symStore
	for _, l := range blocks {
		insts := fr.insts(l)
		for i := range insts {
			in := &insts[i]
			var st []symStore
			var why string
			switch in.Kind {
			case disasm.Call:
				if _, ok := a.in.PLT[in.Target]; ok {
					continue // imports are assumed not to write the condition
				}
				st, why = fr.calleeStores(l, i, in)
			case disasm.CallInd:
				if in.Flags&disasm.RIPRel != 0 && a.in.GOT[in.Target] != "" {
					continue
				}
				why = fmt.Sprintf("indirect call at 0x%x", in.Addr)
			default:
				st, why = fr.storeAt(l, i, in)
			}
			if why != "" {
				return nil, why
			}
			out = append(out, st...)
		}
	}
	return out, ""
}

// calleeStores evaluates the stores of the function the direct call at
// instruction i of block l calls. (calleeGraph admits only callees that
// call nothing but imports.)
func (fr *frame) calleeStores(l, i int, in *disasm.Inst) ([]symStore, string) {
	cf, why := fr.calleeFrame(l, i, in)
	if why != "" {
		return nil, why
	}
	all := make([]int, len(cf.fg.blocks))
	for k := range all {
		all[k] = k
	}
	return cf.stores(all)
}

// storeAt evaluates the address instruction i of block l stores to.
func (fr *frame) storeAt(l, i int, in *disasm.Inst) ([]symStore, string) {
	if in.Kind == disasm.Nop || in.Flags&disasm.HasMem == 0 || in.Mem.Access&disasm.Write == 0 {
		return nil, ""
	}
	x := fr.sa.a.inst(in)
	if x == nil {
		return nil, fmt.Sprintf("undecoded store at 0x%x", in.Addr)
	}
	if in.Flags&disasm.StringOp != 0 {
		return nil, fmt.Sprintf("string store at 0x%x", in.Addr)
	}
	m, _, ok := memArg(x)
	if !ok {
		return nil, ""
	}
	if m.Segment != 0 {
		return nil, "" // thread-local: never a condition read here
	}
	if isStackSlot(m, fr.fp) {
		return nil, ""
	}
	addr, why := fr.address(l, i, memRefOf(in, m))
	if why != "" {
		return nil, fmt.Sprintf("store at 0x%x: %s", in.Addr, why)
	}
	return []symStore{{a: addr, size: int64(in.Mem.Size)}}, ""
}
