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

type symKind uint8

const (
	symOpaque symKind = iota // invariant, value not known symbolically
	symConst                 // off
	symReg                   // register reg at the loop entry + off
	symSlot                  // 8-byte stack slot [reg+k] at the loop entry + off
)

type sym struct {
	kind symKind
	reg  int
	k    int64
	off  int64
}

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

type loadRec struct {
	addr uint64 // the load instruction
	a    sym    // the address it reads
	size int64
	rip  bool
	fn   string // callee it is in, "" for the loop
}

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

type symStore struct {
	a    sym
	size int64
}

type spinAn struct {
	a        *analyzer
	loads    []loadRec
	loadAt   map[uint64]int
	budget   int
	visiting map[visitSpin]bool
}

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
	stores, why := fr.loopStores(lp)
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

// loopStores evaluates the addresses of the memory the loop and its
// callees write (stack slots aside).
func (fr *frame) loopStores(lp *floop) ([]symStore, string) {
	a := fr.sa.a
	var out []symStore
	for _, l := range lp.body {
		insts := fr.insts(l)
		for i := range insts {
			in := &insts[i]
			switch in.Kind {
			case disasm.Call:
				if _, ok := a.in.PLT[in.Target]; ok {
					continue // imports are assumed not to write the condition
				}
				cf, why := fr.calleeFrame(l, i, in)
				if why != "" {
					return nil, why
				}
				st, why := cf.stores()
				if why != "" {
					return nil, why
				}
				out = append(out, st...)
				continue
			case disasm.CallInd:
				if in.Flags&disasm.RIPRel != 0 && a.in.GOT[in.Target] != "" {
					continue
				}
				return nil, fmt.Sprintf("indirect call at 0x%x", in.Addr)
			}
			st, why := fr.storeAt(l, i, in)
			if why != "" {
				return nil, why
			}
			out = append(out, st...)
		}
	}
	return out, ""
}

// stores evaluates a callee frame's stores.
func (fr *frame) stores() ([]symStore, string) {
	var out []symStore
	for l := range fr.fg.blocks {
		insts := fr.insts(l)
		for i := range insts {
			st, why := fr.storeAt(l, i, &insts[i])
			if why != "" {
				return nil, why
			}
			out = append(out, st...)
		}
	}
	return out, ""
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
	addr, why := fr.address(l, i, in, m)
	if why != "" {
		return nil, fmt.Sprintf("store at 0x%x: %s", in.Addr, why)
	}
	return []symStore{{a: addr, size: int64(in.Mem.Size)}}, ""
}

// address evaluates the effective address of m at instruction i of block
// l; it must be the same in every iteration.
func (fr *frame) address(l, i int, in *disasm.Inst, m x86asm.Mem) (sym, string) {
	if m.Base == x86asm.RIP {
		return sym{kind: symConst, off: int64(in.Target)}, ""
	}
	disp := int64(int32(m.Disp))
	if m.Base == 0 && m.Index == 0 {
		return sym{kind: symConst, off: in.Mem.Disp}, ""
	}
	var out sym
	if m.Base != 0 {
		n, w, ok := gpr(m.Base)
		if !ok || w != 8 {
			return sym{}, "unsupported base"
		}
		v := fr.eval(loc{kind: lReg, reg: n}, l, i)
		if v.bad != "" {
			return sym{}, fmt.Sprintf("address changes (%s)", v.bad)
		}
		if len(v.loads) > 0 {
			return sym{}, "address is loaded in the loop"
		}
		out = v.s.shift(disp)
	}
	if m.Index != 0 {
		n, _, ok := gpr(m.Index)
		if !ok {
			return sym{}, "unsupported index"
		}
		v := fr.eval(loc{kind: lReg, reg: n}, l, i)
		if v.bad != "" {
			return sym{}, fmt.Sprintf("address changes (%s)", v.bad)
		}
		if len(v.loads) > 0 {
			return sym{}, "address is loaded in the loop"
		}
		out = sym{}
	}
	return out, ""
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
		if isMovLike(x.Op) {
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
	dst, dw := -1, 0
	if r, ok := x.Args[0].(x86asm.Reg); ok && !noDest[x.Op] {
		if n, w, ok := gpr(r); ok {
			dst, dw = n, w
		}
	}
	if dst != q.reg {
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
	var v sv
	switch {
	case isMovLike(x.Op):
		v = fr.source(l, i, in, x, x.Args[1], dw)
		if x.Op != x86asm.MOV {
			v = join(v, sv{})
		}
	case x.Op == x86asm.LEA:
		m, _ := x.Args[1].(x86asm.Mem)
		if dw != 8 && dw != 4 {
			return badf("lea width")
		}
		s, why := fr.address(l, i, in, m)
		if why != "" {
			return badf("%s", why)
		}
		v = sv{s: s}
	case (x.Op == x86asm.XOR || x.Op == x86asm.SUB) && x.Args[1] == x.Args[0] && dw >= 4:
		v = constv(0)
	case (x.Op == x86asm.ADD || x.Op == x86asm.SUB) && dw == 8 && isImm(x.Args[1]):
		imm := int64(x.Args[1].(x86asm.Imm))
		if x.Op == x86asm.SUB {
			imm = -imm
		}
		v = fr.eval(q, l, i)
		v.s = v.s.shift(imm)
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
	if dw < 4 && v.bad == "" {
		// A partial write keeps the rest of the register.
		v = join(v, fr.eval(q, l, i))
	}
	return v
}

func isImm(a x86asm.Arg) bool {
	_, ok := a.(x86asm.Imm)
	return ok
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
	addr, why := fr.address(l, i, in, m)
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

// calleeValue is the return value of the direct call at instruction i.
func (fr *frame) calleeValue(l, i int, in *disasm.Inst) sv {
	cf, why := fr.calleeFrame(l, i, in)
	if why != "" {
		return badf("%s", why)
	}
	var out sv
	first := true
	for cl := range cf.fg.blocks {
		insts := cf.insts(cl)
		last := &insts[len(insts)-1]
		if last.Kind != disasm.Ret {
			continue
		}
		v := cf.eval(loc{kind: lReg, reg: rAX}, cl, len(insts)-1)
		if v.bad != "" {
			return badf("%s returns %s", cf.fn, v.bad)
		}
		if first {
			out, first = v, false
		} else {
			out = merge(out, v)
		}
	}
	if first {
		return badf("%s never returns", cf.fn)
	}
	return out
}

// callClobbers is the set of registers (and flags) the direct call in may
// change: for a small callee the analysis can look into, the registers it
// actually writes (gcc's -fipa-ra lets callers keep values in caller-saved
// registers across such calls); otherwise all caller-saved ones.
func (a *analyzer) callClobbers(in *disasm.Inst) uint32 {
	if _, imp := a.in.PLT[in.Target]; imp {
		return callerSaved | flagMask
	}
	fi := a.funcAt(in.Target)
	if fi < 0 {
		return callerSaved | flagMask
	}
	ci := a.calleeGraph(fi)
	if ci.why != "" {
		return callerSaved | flagMask
	}
	return ci.clobbers
}

// calleeInfo is a small function of the binary the spin analysis can look
// into.
type calleeInfo struct {
	fg       *fgraph
	why      string
	clobbers uint32 // registers and flags it may change
}

func (a *analyzer) calleeGraph(fi int) *calleeInfo {
	if ci, ok := a.callee[fi]; ok {
		return ci
	}
	ci := &calleeInfo{}
	a.callee[fi] = ci
	g := a.g
	f := &g.Funcs[fi]
	name := f.Name
	if name == "" {
		name = fmt.Sprintf("0x%x", f.Start)
	}
	if len(f.Blocks) == 0 || g.Blocks[f.Blocks[0]].Start != f.Start {
		ci.why = "callee " + name + " not decoded"
		return ci
	}
	n := 0
	idx := map[uint64]int{}
	for l, b := range f.Blocks {
		idx[g.Blocks[b].Start] = l
		n += g.Blocks[b].Last - g.Blocks[b].First + 1
	}
	if n > a.opt.CalleeInsts {
		ci.why = fmt.Sprintf("callee %s has %d instructions", name, n)
		return ci
	}
	fg := &fgraph{fi: fi, fp: f.FramePointer, blocks: f.Blocks,
		succ: make([][]int, len(f.Blocks)), pred: make([][]int, len(f.Blocks))}
	for l, b := range f.Blocks {
		blk := &g.Blocks[b]
		for i, in := range g.Insts(blk) {
			if in.Kind == disasm.Call || in.Kind == disasm.CallInd {
				ci.clobbers |= callerSaved | flagMask
			} else {
				ci.clobbers |= regWrites(&g.Insts(blk)[i], a.inst(&g.Insts(blk)[i]))
			}
			switch in.Kind {
			case disasm.Call:
				if _, ok := a.in.PLT[in.Target]; !ok {
					ci.why = "callee " + name + " calls other functions"
					return ci
				}
			case disasm.CallInd:
				if in.Flags&disasm.RIPRel == 0 || a.in.GOT[in.Target] == "" {
					ci.why = "callee " + name + " makes indirect calls"
					return ci
				}
			case disasm.JmpInd, disasm.Bad:
				ci.why = "callee " + name + " has an indirect jump"
				return ci
			}
		}
		for _, s := range blk.Succs {
			t, ok := idx[s]
			if !ok {
				ci.why = "callee " + name + " jumps out of itself"
				return ci
			}
			fg.succ[l] = append(fg.succ[l], t)
			fg.pred[t] = append(fg.pred[t], l)
		}
	}
	ci.fg = fg
	// Callee-saved registers are restored (the ABI); rax is the result.
	ci.clobbers = ci.clobbers&callerSaved | 1<<rAX | flagMask
	return ci
}

// calleeFrame is the frame for the direct call at instruction i.
func (fr *frame) calleeFrame(l, i int, in *disasm.Inst) (*frame, string) {
	a := fr.sa.a
	if fr.header < 0 {
		return nil, "nested call"
	}
	fi := a.funcAt(in.Target)
	if fi < 0 {
		return nil, fmt.Sprintf("call to 0x%x, not a known function", in.Target)
	}
	ci := a.calleeGraph(fi)
	if ci.why != "" {
		return nil, ci.why
	}
	name := a.g.Funcs[fi].Name
	if name == "" {
		name = fmt.Sprintf("0x%x", in.Target)
	}
	return &frame{sa: fr.sa, fg: ci.fg, fn: name, header: -1, entry: 0, fp: ci.fg.fp,
		rspOK: true, parent: fr, callL: l, callI: i}, ""
}
