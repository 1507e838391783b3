package loops

import (
	"fmt"

	"golang.org/x/arch/x86/x86asm"

	"hgrewrite/disasm"
)

// The parameter tracer recovers where a wait call's pointer arguments come
// from, as an expression that can be evaluated at every loop exit: it walks
// backwards from the call, inside the loop and then before it, rewriting
// the traced expression at each instruction that defines it, and returns
// the deepest rewriting that is still valid at the loop exits (its
// registers and memory slot are not written in the loop, nor between the
// point where it was found and the loop entry).

// texpr is the traced expression: reg+disp, a constant (reg < 0, !mem), or
// the 8-byte value at reg+disp (or at address disp when reg < 0) plus add.
type texpr struct {
	mem  bool
	reg  int
	disp int64
	add  int64
}

func (e texpr) String() string {
	switch {
	case !e.mem && e.reg < 0:
		return fmt.Sprintf("0x%x", uint64(e.disp))
	case !e.mem:
		if e.disp == 0 {
			return regName(e.reg)
		}
		return fmt.Sprintf("%s%+#x", regName(e.reg), e.disp)
	case e.reg < 0:
		return fmt.Sprintf("[0x%x]", uint64(e.disp))
	}
	return fmt.Sprintf("[%s%+#x]", regName(e.reg), e.disp)
}

// mstore is a memory write: base register (or -1 for a fixed address) and
// byte range; any means the displacement is unknown (indexed, string op).
type mstore struct {
	base int
	disp int64
	size int64
	any  bool
}

func (s mstore) overlaps(base int, disp, size int64) bool {
	if s.base != base {
		return false
	}
	return s.any || s.disp < disp+size && disp < s.disp+s.size
}

// pstate is what the path from a point before the loop to the loop entry
// writes.
type pstate struct {
	regs   uint32
	stores []mstore
}

func (p pstate) with(regs uint32, st []mstore) pstate {
	p.regs |= regs
	if len(st) > 0 {
		p.stores = append(p.stores[:len(p.stores):len(p.stores)], st...)
	}
	return p
}

type tres struct {
	v   Value
	top bool // only reached along a cycle: no information
}

type visitKey struct {
	l      int
	e      texpr
	inLoop bool
}

type tracer struct {
	a         *analyzer
	fg        *fgraph
	inLoop    map[int]bool
	header    int
	writes    uint32
	stores    []mstore
	budget    int
	visiting  map[visitKey]bool
	entryRegs bool // at the function entry a register is an entryReg value
}

// newTracer prepares tracing in loop lp of fg (lp nil: no loop).
func (a *analyzer) newTracer(fg *fgraph, lp *floop) *tracer {
	tr := &tracer{a: a, fg: fg, inLoop: map[int]bool{}, header: -1, visiting: map[visitKey]bool{}}
	if lp == nil {
		return tr
	}
	tr.header = lp.header
	for _, v := range lp.body {
		tr.inLoop[v] = true
		for i := range tr.insts(v) {
			in := &tr.insts(v)[i]
			x := a.inst(in)
			tr.writes |= regWrites(in, x)
			tr.stores = append(tr.stores, memWrites(in, x)...)
		}
	}
	return tr
}

func (tr *tracer) insts(l int) []disasm.Inst {
	g := tr.a.g
	return g.Insts(&g.Blocks[tr.fg.blocks[l]])
}

// memWrites lists the memory the instruction writes (calls excluded: they
// are assumed not to write the slots that parameters are loaded from).
func memWrites(in *disasm.Inst, x *x86asm.Inst) []mstore {
	if in.Kind == disasm.Call || in.Kind == disasm.CallInd || in.Kind == disasm.Nop {
		return nil
	}
	var out []mstore
	if x != nil && (x.Op == x86asm.PUSH || x.Op == x86asm.PUSHFQ) {
		out = append(out, mstore{base: rSP, disp: -8, size: 8})
	}
	if in.Flags&disasm.HasMem == 0 || in.Mem.Access&disasm.Write == 0 {
		return out
	}
	if in.Flags&disasm.StringOp != 0 {
		return append(out, mstore{base: rDI, any: true})
	}
	s := mstore{base: -1, disp: in.Mem.Disp, size: int64(in.Mem.Size)}
	switch {
	case in.Flags&disasm.RIPRel != 0:
		s.disp = int64(in.Target)
	case in.Mem.Base != 0:
		n, _, ok := gpr(in.Mem.Base)
		if !ok {
			return append(out, mstore{base: -2, any: true})
		}
		s.base = n
	}
	if in.Mem.Index != 0 {
		s.any = true
	}
	if in.Flags&disasm.TLSMem != 0 {
		s.base = -3 // thread-local: never a traced slot
	}
	return append(out, s)
}

// argValue traces register r at the wait call s.
func (tr *tracer) argValue(r int, s waitSite) Value {
	if tr.a.in.Decode == nil {
		return Value{Why: "no decoder"}
	}
	tr.budget = 4000
	res := tr.trace(texpr{reg: r}, s.local, s.idx, true, pstate{})
	if res.top {
		return Value{Why: regName(r) + ": only defined along cycles"}
	}
	return res.v
}

func unknown(format string, args ...any) tres {
	return tres{v: Value{Why: fmt.Sprintf(format, args...)}}
}

// trace returns the value of e just before instruction idx of local block l.
func (tr *tracer) trace(e texpr, l, idx int, inLoop bool, ps pstate) tres {
	insts := tr.insts(l)
	for i := idx - 1; i >= 0; i-- {
		in := &insts[i]
		if tr.budget--; tr.budget <= 0 {
			return unknown("%s: search too long", e)
		}
		x := tr.a.inst(in)
		e2, defined, why := tr.step(e, in, x)
		if !defined {
			if !inLoop {
				ps = ps.with(regWrites(in, x), memWrites(in, x))
			}
			continue
		}
		desc := fmt.Sprintf("%s <- %s", e, gnu(in, x))
		if why != "" {
			return unknown("%s: %s", desc, why)
		}
		ps2 := ps
		if !inLoop {
			ps2 = ps.with(regWrites(in, x), memWrites(in, x))
		}
		r := tr.trace(e2, l, i, inLoop, ps2)
		if !r.top && r.v.Kind != Unknown {
			r.v.Why = desc + "; " + r.v.Why
			return r
		}
		if v, ok := tr.valueOf(e2, inLoop, ps2); ok {
			v.Why = desc
			return tres{v: v}
		}
		if r.top {
			return unknown("%s; only defined along cycles", desc)
		}
		return unknown("%s; %s", desc, r.v.Why)
	}
	// At the start of block l.
	if inLoop && l == tr.header {
		v, ok := tr.valueOf(e, true, pstate{})
		if !ok {
			return unknown("%s: changes in the loop", e)
		}
		var outside []int
		for _, p := range tr.fg.pred[l] {
			if !tr.inLoop[p] {
				outside = append(outside, p)
			}
		}
		r := tr.join(e, l, outside, false, pstate{})
		if !r.top && r.v.Kind != Unknown {
			return r
		}
		v.Why = e.String() + " at the loop entry"
		return tres{v: v}
	}
	preds := tr.fg.pred[l]
	if inLoop {
		for _, p := range preds {
			if !tr.inLoop[p] {
				return unknown("%s: the loop is entered at 0x%x too", e, tr.a.g.Blocks[tr.fg.blocks[l]].Start)
			}
		}
	}
	if len(preds) == 0 {
		if tr.entryRegs && !e.mem && e.reg >= 0 && tr.a.g.Blocks[tr.fg.blocks[l]].Start == tr.a.g.Funcs[tr.fg.fi].Start {
			return tres{v: Value{Kind: entryReg, Reg: reg64(e.reg), Disp: e.disp}}
		}
		return unknown("%s at the function entry", e)
	}
	return tr.join(e, l, preds, inLoop, ps)
}

// join traces e at the end of each predecessor and merges the results.
func (tr *tracer) join(e texpr, l int, preds []int, inLoop bool, ps pstate) tres {
	key := visitKey{l, e, inLoop}
	if tr.visiting[key] {
		return tres{top: true}
	}
	tr.visiting[key] = true
	defer delete(tr.visiting, key)
	var out tres
	out.top = true
	for _, p := range preds {
		r := tr.trace(e, p, len(tr.insts(p)), inLoop, ps)
		if r.top {
			continue
		}
		if r.v.Kind == Unknown {
			return r
		}
		if out.top {
			out = r
			continue
		}
		if !sameValue(out.v, r.v) {
			return unknown("%s differs between paths (%s, %s)", e, out.v, r.v)
		}
	}
	return out
}

func sameValue(a, b Value) bool {
	return a.Kind == b.Kind && a.Reg == b.Reg && a.Disp == b.Disp && a.Addr == b.Addr && a.Add == b.Add
}

// valueOf converts e into a Value if it is valid at the loop exits: its
// register and slot are not written in the loop, nor (before the loop) on
// the path to the loop entry.
func (tr *tracer) valueOf(e texpr, inLoop bool, ps pstate) (Value, bool) {
	written := tr.writes
	if !inLoop {
		written |= ps.regs
	}
	if e.reg >= 0 && written&(1<<e.reg) != 0 {
		return Value{}, false
	}
	if !e.mem {
		if e.reg < 0 {
			return Value{Kind: Const, Addr: uint64(e.disp)}, true
		}
		return Value{Kind: RegPlus, Reg: reg64(e.reg), Disp: e.disp}, true
	}
	for _, s := range tr.stores {
		if s.overlaps(e.reg, e.disp, 8) {
			return Value{}, false
		}
	}
	if !inLoop {
		for _, s := range ps.stores {
			if s.overlaps(e.reg, e.disp, 8) {
				return Value{}, false
			}
		}
	}
	v := Value{Kind: Load}
	if e.reg < 0 {
		v.Addr = uint64(e.disp)
	} else {
		v.Reg, v.Disp = reg64(e.reg), e.disp
	}
	if e.add != 0 {
		v.Kind, v.Add = LoadPlus, e.add
	}
	return v, true
}

// step rewrites e across instruction in: if in defines e, it returns the
// expression before in, or a reason why it cannot.
func (tr *tracer) step(e texpr, in *disasm.Inst, x *x86asm.Inst) (texpr, bool, string) {
	if in.Kind == disasm.Nop {
		return e, false, ""
	}
	w := regWrites(in, x)
	if !e.mem {
		if e.reg < 0 || w&(1<<e.reg) == 0 {
			return e, false, ""
		}
		if in.Kind == disasm.Call || in.Kind == disasm.CallInd {
			return e, true, "clobbered by the call"
		}
		if x == nil {
			return e, true, "undecoded instruction"
		}
		return tr.defReg(e, in, x)
	}
	// A memory slot: its base register may change, or it may be stored to.
	if e.reg >= 0 && w&(1<<e.reg) != 0 {
		if in.Kind == disasm.Call || in.Kind == disasm.CallInd || x == nil {
			return e, true, "base register clobbered"
		}
		if x.Op == x86asm.PUSH && e.reg == rSP {
			if e.disp >= 0 && e.disp < 8 {
				if r, ok := x.Args[0].(x86asm.Reg); ok && e.disp == 0 {
					if n, wd, ok := gpr(r); ok && wd == 8 {
						return texpr{reg: n, disp: e.add}, true, ""
					}
				}
				return e, true, "slot written by push"
			}
			e.disp -= 8
			return e, true, ""
		}
		b, ok, why := tr.defReg(texpr{reg: e.reg}, in, x)
		if !ok || why != "" {
			return e, true, "base register: " + why
		}
		if b.mem {
			return e, true, "base register loaded from memory"
		}
		return texpr{mem: true, reg: b.reg, disp: b.disp + e.disp, add: e.add}, true, ""
	}
	for _, s := range memWrites(in, x) {
		if !s.overlaps(e.reg, e.disp, 8) {
			continue
		}
		if x == nil || s.any || s.disp != e.disp || s.size != 8 {
			return e, true, "slot written"
		}
		// Only a plain mov of a 64-bit register or an immediate is followed.
		switch t := stored(in, x); {
		case t.conv:
		case t.kind == xCopy && t.src >= 0 && t.srcWidth == 8:
			return texpr{reg: t.src, disp: e.add}, true, ""
		case t.kind == xConst:
			return texpr{reg: -1, disp: t.imm + e.add}, true, ""
		}
		return e, true, "slot written"
	}
	return e, false, ""
}

// defReg rewrites register expression e (e.reg written by in).
func (tr *tracer) defReg(e texpr, in *disasm.Inst, x *x86asm.Inst) (texpr, bool, string) {
	t := transfer(in, x, e.reg)
	switch t.kind {
	case xWritten:
		return e, true, "written by " + x.Op.String()
	case xStack:
		return texpr{reg: t.src, disp: e.disp + t.imm}, true, ""
	case xAddImm:
		return texpr{reg: e.reg, disp: e.disp + t.imm}, true, ""
	case xCopy:
		if t.src >= 0 && t.srcWidth == 8 && t.width == 8 && !t.conv {
			return texpr{reg: t.src, disp: e.disp}, true, ""
		}
	case xConst:
		if t.width >= 4 {
			return texpr{reg: -1, disp: t.imm + e.disp}, true, ""
		}
	case xLoad:
		if p, ok := loadExpr(t); ok {
			p.add = e.disp
			return p, true, ""
		}
	case xAddr:
		// An absolute lea (no base) is not followed.
		m := t.mem
		switch {
		case t.width != 8 || m.index != noIndex:
		case m.kind == refRIP:
			return texpr{reg: -1, disp: m.disp + e.disp}, true, ""
		case m.kind == refReg:
			return texpr{reg: m.reg, disp: m.disp + e.disp}, true, ""
		}
	}
	return e, true, "computed by " + gnu(in, x)
}

// loadExpr is the slot a full 64-bit load reads, as a memory expression:
// a fixed address or a register plus displacement (no index, not
// thread-local).
func loadExpr(t xfer) (texpr, bool) {
	m := t.mem
	if t.width != 8 || t.conv || m.seg || m.index != noIndex {
		return texpr{}, false
	}
	switch m.kind {
	case refRIP, refAbs:
		return texpr{mem: true, reg: -1, disp: m.disp}, true
	case refReg:
		return texpr{mem: true, reg: m.reg, disp: m.disp}, true
	}
	return texpr{}, false
}
