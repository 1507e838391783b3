package loops

import (
	"golang.org/x/arch/x86/x86asm"

	"hgrewrite/disasm"
)

// Three analyses follow values through instructions: the parameter tracer
// (params.go) rewrites a pointer expression backwards, the spin evaluator
// (spineval.go) slices a condition backwards into the loads it depends on,
// and the counterpart tracker (counterpart.go) follows pointers to globals
// forwards through a block. What one instruction does to a register it
// writes (transfer), what a store writes (stored) and where a memory
// operand points (memRefOf) are decided here, once; each analysis maps the
// cases it can follow into its own terms and treats the rest as unknown.
//
// Unifying them made three rules stricter than one of the analyses had
// them (no program in the test corpus changed): xor or sub of a register
// with itself is zero only for 32- and 64-bit registers (the parameter
// tracer took `sub %al,%al` as zeroing rax); the counterpart tracker no
// longer follows `sub %rax,%rax` as a pointer derived from rax (it is 0);
// displacements are sign-extended everywhere (the tracker's lea added a
// negative 32-bit displacement as a large positive one).

// xferKind classifies what an instruction does to a register.
type xferKind uint8

const (
	xWritten  xferKind = iota // written, but not as the destination operand (implicitly, or as xchg's second operand)
	xComputed                 // the destination, computed in a way not followed as a value
	xCopy                     // = register src (mov; with conv: movzx, movsx, movsxd, movbe)
	xConst                    // = imm (mov $imm; xor or sub of a 32- or 64-bit register with itself: 0)
	xLoad                     // = the memory at mem (mov; with conv as for xCopy)
	xAddr                     // = the address of mem (lea)
	xAddImm                   // = itself + imm (add or sub of an immediate to a 64-bit register)
	xAddVar                   // = itself plus or minus a register or memory (add, sub to a 64-bit register)
	xStack                    // rsp = register src + imm: push (rsp-8), pop (rsp+8), leave (rbp+8)
)

// xfer is what an instruction makes of a register, in terms of the values
// before it; for a store (stored), what it writes to memory.
type xfer struct {
	kind     xferKind
	width    int    // bytes written: 1 and 2 keep the rest of the register, 4 zero-extends it
	src      int    // xCopy, xStack: the register read, -1 if not a general-purpose one; xAddVar: the register added, -1 for memory
	srcWidth int    // xCopy, xAddVar: the width of src
	imm      int64  // xConst: the value (of the whole register when width is 4 or 8); xAddImm, xStack: the amount added
	mem      memRef // xLoad, xAddr
	conv     bool   // xCopy, xLoad: the value is converted (extended, byte-swapped) on the way
	sub      bool   // xAddVar: subtracted
}

// transfer says what instruction x (in) does to register r, which it
// writes.
func transfer(in *disasm.Inst, x *x86asm.Inst, r int) xfer {
	if t, ok := stackXfer(x, r); ok {
		return t
	}
	dst, dw, ok := destReg(x)
	if !ok || dst != r {
		return xfer{kind: xWritten}
	}
	t := xfer{kind: xComputed, width: dw}
	switch {
	case isMovLike(x.Op):
		t = moved(in, x)
		t.width = dw
		if t.kind == xConst && dw == 4 {
			t.imm = int64(uint32(t.imm)) // a 32-bit write zero-extends
		}
	case x.Op == x86asm.LEA:
		if m, ok := x.Args[1].(x86asm.Mem); ok {
			t.kind, t.mem = xAddr, memRefOf(in, m)
		}
	case (x.Op == x86asm.XOR || x.Op == x86asm.SUB) && x.Args[1] == x.Args[0] && dw >= 4:
		t.kind, t.imm = xConst, 0
	case (x.Op == x86asm.ADD || x.Op == x86asm.SUB) && dw == 8:
		t.addTo(x)
	}
	return t
}

// stackXfer is what push, pop and leave do to rsp.
func stackXfer(x *x86asm.Inst, r int) (xfer, bool) {
	if r != rSP {
		return xfer{}, false
	}
	switch x.Op {
	case x86asm.PUSH:
		return xfer{kind: xStack, width: 8, src: rSP, imm: -8}, true
	case x86asm.POP:
		if dst, _, ok := destReg(x); !ok || dst != rSP {
			return xfer{kind: xStack, width: 8, src: rSP, imm: 8}, true
		}
	case x86asm.LEAVE:
		return xfer{kind: xStack, width: 8, src: rBP, imm: 8}, true
	}
	return xfer{}, false
}

// destReg is the general-purpose register x writes as its first operand.
func destReg(x *x86asm.Inst) (n, width int, ok bool) {
	if noDest[x.Op] {
		return 0, 0, false
	}
	return gprDest(x)
}

// moved is what a mov-like instruction copies: its second operand.
func moved(in *disasm.Inst, x *x86asm.Inst) xfer {
	t := xfer{kind: xComputed, conv: x.Op != x86asm.MOV}
	switch s := x.Args[1].(type) {
	case x86asm.Reg:
		t.kind, t.src, t.srcWidth = xCopy, -1, 0
		if n, w, ok := gpr(s); ok {
			t.src, t.srcWidth = n, w
		}
	case x86asm.Imm:
		t.kind, t.imm = xConst, int64(s)
	case x86asm.Mem:
		t.kind, t.mem = xLoad, memRefOf(in, s)
	}
	return t
}

// addTo fills in an add or sub to a 64-bit register.
func (t *xfer) addTo(x *x86asm.Inst) {
	switch s := x.Args[1].(type) {
	case x86asm.Imm:
		t.kind, t.imm = xAddImm, int64(s)
		if x.Op == x86asm.SUB {
			t.imm = -t.imm
		}
	case x86asm.Reg, x86asm.Mem:
		t.kind, t.src, t.sub = xAddVar, -1, x.Op == x86asm.SUB
		if r, ok := s.(x86asm.Reg); ok {
			if n, w, ok := gpr(r); ok {
				t.src, t.srcWidth = n, w
			}
		}
	}
}

// stored is what instruction x writes to its memory destination: a
// register (xCopy) or an immediate (xConst) for a mov-like store,
// otherwise xComputed.
func stored(in *disasm.Inst, x *x86asm.Inst) xfer {
	if !isMovLike(x.Op) {
		return xfer{kind: xComputed}
	}
	return moved(in, x)
}

// refKind says what a memory operand's address is relative to.
type refKind uint8

const (
	refOther refKind = iota // a base that is not a 64-bit general-purpose register
	refRIP                  // rip-relative: the fixed address disp
	refAbs                  // no base: the fixed address disp (plus the index, if any)
	refReg                  // register reg + disp
)

// noIndex and badIndex are memRef.index values besides register numbers.
const (
	noIndex  = -1
	badIndex = -2 // not a general-purpose register (VSIB)
)

// memRef is where a memory operand points.
type memRef struct {
	kind  refKind
	reg   int   // refReg: the base register
	disp  int64 // the fixed address, or the displacement (sign-extended)
	index int   // the index register, noIndex or badIndex
	seg   bool  // fs or gs: thread-local
}

// memRefOf decodes memory operand m of instruction in.
func memRefOf(in *disasm.Inst, m x86asm.Mem) memRef {
	r := memRef{disp: int64(int32(m.Disp)), index: noIndex, seg: m.Segment != 0}
	switch n, w, ok := gpr(m.Base); {
	case m.Base == x86asm.RIP:
		r.kind, r.disp = refRIP, int64(in.Target)
	case m.Base == 0:
		r.kind, r.disp = refAbs, in.Mem.Disp
	case ok && w == 8:
		r.kind, r.reg = refReg, n
	}
	if m.Index != 0 {
		r.index = badIndex
		if n, _, ok := gpr(m.Index); ok {
			r.index = n
		}
	}
	return r
}
