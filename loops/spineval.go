package loops

import (
	"fmt"

	"golang.org/x/arch/x86/x86asm"

	"hgrewrite/disasm"
)

// The backward evaluator of the spinning-read analysis: eval walks back
// from an instruction through one iteration of the loop (or through a
// callee, up to its entry and on at the call site) to the definitions of a
// register, the flags or a stack slot, and returns their abstract value
// (spinvalue.go): a symbolic value of the loop entry, or the spin loads it
// depends on, or why it is neither. What an instruction does to a register
// or a stack slot is the shared transfer function's (transfer.go) where
// that describes it; dependencies through arithmetic are joined here.

// spinAn is the state of one loop's analysis: the spin loads found so far
// (deduplicated by instruction address), the step budget shared by all
// evaluations, and the evaluations in progress (to cut cycles).
type spinAn struct {
	a        *analyzer
	loads    []loadRec
	loadAt   map[uint64]int
	budget   int
	visiting map[visitSpin]bool
}

// visitSpin is an evaluation in progress: q at the start of block l.
type visitSpin struct {
	fr *frame
	l  int
	q  loc
}

// frame is the code being sliced: the loop, or a callee called from it.
type frame struct {
	sa     *spinAn
	fg     *fgraph
	fn     string // callee name; "" for the loop
	inLoop map[int]bool
	header int // loop frame: the header; callee frame: -1
	entry  int // callee frame: the entry block
	writes uint32
	slots  []mstore // loop frame: stack slots written in the loop
	fp     bool
	rspOK  bool // rsp-based slots are stable names
	parent *frame
	callL  int // callee frame: the call site in parent
	callI  int
}

func (fr *frame) insts(l int) []disasm.Inst {
	g := fr.sa.a.g
	return g.Insts(&g.Blocks[fr.fg.blocks[l]])
}

// address evaluates the effective address of memory operand r at
// instruction i of block l; it must be the same in every iteration.
func (fr *frame) address(l, i int, r memRef) (sym, string) {
	switch {
	case r.kind == refRIP, r.kind == refAbs && r.index == noIndex:
		return sym{kind: symConst, off: r.disp}, ""
	case r.kind == refOther:
		return sym{}, "unsupported base"
	}
	var out sym
	if r.kind == refReg {
		base, why := fr.addressReg(r.reg, l, i)
		if why != "" {
			return sym{}, why
		}
		out = base.shift(r.disp)
	}
	if r.index != noIndex {
		if r.index == badIndex {
			return sym{}, "unsupported index"
		}
		if _, why := fr.addressReg(r.index, l, i); why != "" {
			return sym{}, why
		}
		out = sym{} // invariant, but not known symbolically
	}
	return out, ""
}

// addressReg is the value of register n, part of an address, before
// instruction i of block l: it must not change across iterations nor be
// loaded in the loop.
func (fr *frame) addressReg(n, l, i int) (sym, string) {
	v := fr.eval(loc{kind: lReg, reg: n}, l, i)
	if v.bad != "" {
		return sym{}, fmt.Sprintf("address changes (%s)", v.bad)
	}
	if len(v.loads) > 0 {
		return sym{}, "address is loaded in the loop"
	}
	return v.s, ""
}

// eval returns the value of q just before instruction idx of block l.
func (fr *frame) eval(q loc, l, idx int) sv {
	insts := fr.insts(l)
	for i := idx - 1; i >= 0; i-- {
		if fr.sa.budget--; fr.sa.budget <= 0 {
			return badf("analysis too long")
		}
		in := &insts[i]
		if v, defined := fr.step(q, l, i, in); defined {
			return v
		}
	}
	return fr.atStart(q, l)
}

func (fr *frame) atStart(q loc, l int) sv {
	if fr.header == l {
		switch q.kind {
		case lFlags:
			return badf("flags from the previous iteration")
		case lReg:
			if fr.writes&(1<<q.reg) != 0 {
				return badf("%s is loop-carried", q)
			}
			return sv{s: sym{kind: symReg, reg: q.reg}}
		case lSlot:
			for _, s := range fr.slots {
				if s.overlaps(q.reg, q.disp, q.size) {
					return badf("stack slot %s is loop-carried", q)
				}
			}
			return sv{s: sym{kind: symSlot, reg: q.reg, k: q.disp}}
		}
	}
	if fr.header < 0 && l == fr.entry {
		if q.kind == lReg && (argRegs|1<<rBX|1<<rBP|0xf000)&(1<<q.reg) != 0 {
			return fr.parent.eval(q, fr.callL, fr.callI)
		}
		return badf("%s at the entry of %s", q, fr.fn)
	}
	preds := fr.fg.pred[l]
	if len(preds) == 0 {
		return badf("%s: no predecessor", q)
	}
	key := visitSpin{fr, l, q}
	if fr.sa.visiting[key] {
		return badf("%s depends on an inner cycle", q)
	}
	fr.sa.visiting[key] = true
	defer delete(fr.sa.visiting, key)
	var out sv
	for k, p := range preds {
		if fr.inLoop != nil && !fr.inLoop[p] {
			return badf("loop entered at 0x%x", fr.sa.a.g.Blocks[fr.fg.blocks[l]].Start)
		}
		v := fr.eval(q, p, len(fr.insts(p)))
		if v.bad != "" {
			return v
		}
		if k == 0 {
			out = v
		} else {
			out = merge(out, v)
		}
	}
	return out
}

// step: if instruction i (in) defines q, the value it gives q.
func (fr *frame) step(q loc, l, i int, in *disasm.Inst) (sv, bool) {
	a := fr.sa.a
	switch in.Kind {
	case disasm.Nop:
		return sv{}, false
	case disasm.Call, disasm.CallInd:
		switch q.kind {
		case lFlags:
			return badf("flags set by a call"), true
		case lSlot:
			return sv{}, false
		}
		clobbers := uint32(callerSaved)
		if in.Kind == disasm.Call {
			clobbers = a.callClobbers(in)
		}
		if clobbers&(1<<q.reg) == 0 {
			return sv{}, false
		}
		if q.reg == rAX && in.Kind == disasm.Call {
			if _, imp := a.in.PLT[in.Target]; !imp {
				return fr.calleeValue(l, i, in), true
			}
		}
		return badf("%s clobbered by the call at 0x%x", q, in.Addr), true
	}
	x := a.inst(in)
	if x == nil {
		return badf("undecoded instruction at 0x%x", in.Addr), true
	}
	switch q.kind {
	case lFlags:
		if !writesFlags(in, x) {
			return sv{}, false
		}
		if in.Flags&disasm.StringOp != 0 {
			return badf("string instruction"), true
		}
		v := fr.operands(l, i, in, x, false)
		if readsFlags(x.Op) {
			v = join(v, fr.eval(q, l, i))
		}
		if x.Op == x86asm.CMPXCHG {
			v = join(v, fr.eval(loc{kind: lReg, reg: rAX}, l, i))
		}
		return v, true
	case lReg:
		if regWrites(in, x)&(1<<q.reg) == 0 {
			return sv{}, false
		}
		return fr.defReg(q, l, i, in, x), true
	}
	// A stack slot.
	if regWrites(in, x)&(1<<q.reg) != 0 {
		return badf("frame base changes at 0x%x", in.Addr), true
	}
	for _, s := range memWrites(in, x) {
		if !s.overlaps(q.reg, q.disp, q.size) {
			continue
		}
		if s.any || s.disp != q.disp || s.size < q.size {
			return badf("stack slot %s partly written at 0x%x", q, in.Addr), true
		}
		if stored(in, x).kind != xComputed {
			return fr.source(l, i, in, x, x.Args[1], 8), true
		}
		if aluOps[x.Op] {
			v := fr.operands(l, i, in, x, false)
			if readsFlags(x.Op) {
				v = join(v, fr.eval(loc{kind: lFlags}, l, i))
			}
			return v, true
		}
		return badf("stack slot %s written by %s", q, x.Op), true
	}
	return sv{}, false
}

// defReg is the value instruction in gives register q.reg.
func (fr *frame) defReg(q loc, l, i int, in *disasm.Inst, x *x86asm.Inst) sv {
	t := transfer(in, x, q.reg)
	var v sv
	switch t.kind {
	case xWritten, xStack:
		return fr.sideWrite(q, l, i, in, x)
	case xCopy, xLoad:
		v = fr.source(l, i, in, x, x.Args[1], t.width)
		if t.conv {
			v = join(v, sv{})
		}
	case xConst:
		if t.width >= 4 {
			v = constv(t.imm)
		}
	case xAddr:
		if t.width != 8 && t.width != 4 {
			return badf("lea width")
		}
		s, why := fr.address(l, i, t.mem)
		if why != "" {
			return badf("%s", why)
		}
		v = sv{s: s}
	case xAddImm:
		v = fr.eval(q, l, i)
		v.s = v.s.shift(t.imm)
	default:
		v = fr.computed(q, l, i, in, x, t.width)
	}
	if t.width < 4 && v.bad == "" {
		// A partial write keeps the rest of the register.
		v = join(v, fr.eval(q, l, i))
	}
	return v
}

// sideWrite is the value of q.reg after instruction in, which writes it
// other than as its destination operand.
func (fr *frame) sideWrite(q loc, l, i int, in *disasm.Inst, x *x86asm.Inst) sv {
	switch x.Op {
	case x86asm.CMPXCHG:
		if q.reg == rAX {
			return fr.source(l, i, in, x, x.Args[0], 8)
		}
	case x86asm.XCHG, x86asm.XADD:
		if r, ok := x.Args[1].(x86asm.Reg); ok {
			if n, _, _ := gpr(r); n == q.reg {
				return fr.source(l, i, in, x, x.Args[0], 8)
			}
		}
	case x86asm.CDQ, x86asm.CQO, x86asm.CWD, x86asm.CDQE, x86asm.CWDE, x86asm.CBW:
		v := fr.eval(loc{kind: lReg, reg: rAX}, l, i)
		return join(v, sv{})
	}
	return badf("%s written by %s at 0x%x", q, x.Op, in.Addr)
}

// computed is the value of destination q.reg (dw bytes of it) that
// arithmetic computes: it depends on the operands (and the flags, for
// those that read them), but is not known symbolically.
func (fr *frame) computed(q loc, l, i int, in *disasm.Inst, x *x86asm.Inst, dw int) sv {
	var v sv
	switch {
	case x.Op == x86asm.XCHG:
		v = fr.source(l, i, in, x, x.Args[1], dw)
	case aluOps[x.Op] || isSetcc(x.Op) || isCmov(x.Op) || x.Op == x86asm.XADD:
		v = fr.operands(l, i, in, x, isSetcc(x.Op))
		if readsFlags(x.Op) {
			v = join(v, fr.eval(loc{kind: lFlags}, l, i))
		}
		v = join(v, sv{})
	default:
		return badf("%s computed by %s at 0x%x", q, x.Op, in.Addr)
	}
	return v
}

// source is the value of operand arg of instruction i, read before it.
func (fr *frame) source(l, i int, in *disasm.Inst, x *x86asm.Inst, arg x86asm.Arg, dw int) sv {
	switch s := arg.(type) {
	case x86asm.Reg:
		n, w, ok := gpr(s)
		if !ok {
			return badf("value from %s", s)
		}
		v := fr.eval(loc{kind: lReg, reg: n}, l, i)
		if w != 8 || dw != 8 {
			v = join(v, sv{})
		}
		return v
	case x86asm.Imm:
		switch dw {
		case 4:
			return constv(int64(uint32(s)))
		case 8:
			return constv(int64(s))
		}
		return sv{}
	case x86asm.Mem:
		return fr.memRead(l, i, in, x, s)
	}
	return badf("operand %v", arg)
}

// operands joins the values of all explicit operands of instruction i
// (skipFirst: not the first, which the instruction only writes).
func (fr *frame) operands(l, i int, in *disasm.Inst, x *x86asm.Inst, skipFirst bool) sv {
	var v sv
	for k, arg := range x.Args {
		if arg == nil {
			break
		}
		if k == 0 && skipFirst {
			continue
		}
		switch arg.(type) {
		case x86asm.Reg, x86asm.Mem:
			v = join(v, fr.source(l, i, in, x, arg, 8))
		}
		if v.bad != "" {
			return v
		}
	}
	return join(v, sv{})
}

// memRead is the value read from memory operand m by instruction i: a
// stack slot is sliced further; any other memory is a spin load.
func (fr *frame) memRead(l, i int, in *disasm.Inst, x *x86asm.Inst, m x86asm.Mem) sv {
	if m.Segment != 0 {
		return badf("thread-local read at 0x%x", in.Addr)
	}
	size := int64(in.Mem.Size)
	if size == 0 {
		size = int64(x.MemBytes)
	}
	if isStackSlot(m, fr.fp) {
		n, _, _ := gpr(m.Base)
		stable := true
		if fr.header >= 0 {
			stable = n == rSP && fr.rspOK || n == rBP && fr.writes&(1<<rBP) == 0
		}
		if !stable {
			return badf("stack slot read at 0x%x with a changing frame base", in.Addr)
		}
		return fr.eval(loc{kind: lSlot, reg: n, disp: int64(int32(m.Disp)), size: size}, l, i)
	}
	addr, why := fr.address(l, i, memRefOf(in, m))
	if why != "" {
		return badf("load at 0x%x: %s", in.Addr, why)
	}
	sa := fr.sa
	id, ok := sa.loadAt[in.Addr]
	if !ok {
		id = len(sa.loads)
		sa.loads = append(sa.loads, loadRec{addr: in.Addr, a: addr, size: size,
			rip: m.Base == x86asm.RIP, fn: fr.fn})
		sa.loadAt[in.Addr] = id
	}
	return sv{loads: []int{id}}
}
