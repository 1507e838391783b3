package loops

import (
	"strings"

	"golang.org/x/arch/x86/x86asm"

	"hgrewrite/disasm"
)

// General-purpose registers are numbered 0..15 in x86asm's order: rax,
// rcx, rdx, rbx, rsp, rbp, rsi, rdi, r8..r15. A register mask has bit i set
// for register i; bit flagBit stands for the arithmetic flags.
const (
	rAX = iota
	rCX
	rDX
	rBX
	rSP
	rBP
	rSI
	rDI
	rR8
	rR9
	rR10
	rR11
)

const (
	flagBit  = 16
	allGPRs  = 0xffff
	flagMask = 1 << flagBit
	// callerSaved are the registers a call clobbers (System V AMD64 ABI).
	callerSaved = 1<<rAX | 1<<rCX | 1<<rDX | 1<<rSI | 1<<rDI | 1<<rR8 | 1<<rR9 | 1<<rR10 | 1<<rR11
	// argRegs carry the integer arguments of a call.
	argRegs = 1<<rDI | 1<<rSI | 1<<rDX | 1<<rCX | 1<<rR8 | 1<<rR9
)

// gpr maps any general-purpose register name to its number and width in
// bytes. ok is false for other registers (rip, vector, segment...).
func gpr(r x86asm.Reg) (n int, width int, ok bool) {
	switch {
	case r >= x86asm.RAX && r <= x86asm.R15:
		return int(r - x86asm.RAX), 8, true
	case r >= x86asm.EAX && r <= x86asm.R15L:
		return int(r - x86asm.EAX), 4, true
	case r >= x86asm.AX && r <= x86asm.R15W:
		return int(r - x86asm.AX), 2, true
	case r >= x86asm.AL && r <= x86asm.BL:
		return int(r - x86asm.AL), 1, true
	case r >= x86asm.AH && r <= x86asm.BH:
		return int(r - x86asm.AH), 1, true
	case r >= x86asm.SPB && r <= x86asm.R15B:
		return int(r-x86asm.SPB) + 4, 1, true
	}
	return 0, 0, false
}

// reg64 is the x86asm name of register n.
func reg64(n int) x86asm.Reg { return x86asm.RAX + x86asm.Reg(n) }

// regName is the lower-case name of register n, for messages.
func regName(n int) string {
	if n < 0 {
		return "none"
	}
	return strings.ToLower(reg64(n).String())
}

// isFrameBase reports whether memory based on register n is the stack
// frame: rsp always, rbp in a function that sets it up as frame pointer.
func isFrameBase(n int, framePointer bool) bool {
	return n == rSP || n == rBP && framePointer
}

// noDest lists instructions whose first operand is read, not written.
var noDest = map[x86asm.Op]bool{
	x86asm.CMP: true, x86asm.TEST: true, x86asm.BT: true, x86asm.PUSH: true,
	x86asm.UCOMISS: true, x86asm.UCOMISD: true, x86asm.COMISS: true, x86asm.COMISD: true,
	x86asm.PTEST: true, x86asm.NOP: true, x86asm.PAUSE: true, x86asm.LFENCE: true,
	x86asm.MFENCE: true, x86asm.SFENCE: true, x86asm.PREFETCHNTA: true, x86asm.PREFETCHT0: true,
	x86asm.PREFETCHT1: true, x86asm.PREFETCHT2: true, x86asm.PREFETCHW: true,
	x86asm.CLFLUSH: true, x86asm.JMP: true, x86asm.CALL: true, x86asm.RET: true,
}

// noFlags lists instructions that leave the arithmetic flags alone.
var noFlags = map[x86asm.Op]bool{
	x86asm.MOV: true, x86asm.MOVZX: true, x86asm.MOVSX: true, x86asm.MOVSXD: true,
	x86asm.LEA: true, x86asm.PUSH: true, x86asm.POP: true, x86asm.XCHG: true,
	x86asm.NOT: true, x86asm.BSWAP: true, x86asm.NOP: true, x86asm.PAUSE: true,
	x86asm.LFENCE: true, x86asm.MFENCE: true, x86asm.SFENCE: true, x86asm.CDQ: true,
	x86asm.CQO: true, x86asm.CDQE: true, x86asm.CWDE: true, x86asm.CBW: true, x86asm.CWD: true,
	x86asm.LEAVE: true, x86asm.MOVBE: true, x86asm.PREFETCHNTA: true, x86asm.PREFETCHT0: true,
	x86asm.PREFETCHT1: true, x86asm.PREFETCHT2: true, x86asm.PREFETCHW: true,
	x86asm.MOVQ: true, x86asm.MOVD: true, x86asm.MOVAPS: true, x86asm.MOVAPD: true,
	x86asm.MOVUPS: true, x86asm.MOVUPD: true, x86asm.MOVDQA: true, x86asm.MOVDQU: true,
	x86asm.MOVSS: true, x86asm.MOVSD_XMM: true, x86asm.PXOR: true, x86asm.XORPS: true,
	x86asm.ANDN: true, x86asm.SHLX: true, x86asm.SHRX: true, x86asm.SARX: true, x86asm.RORX: true,
	x86asm.PDEP: true, x86asm.PEXT: true,
}

func isSetcc(op x86asm.Op) bool { return op >= x86asm.SETA && op <= x86asm.SETS }
func isCmov(op x86asm.Op) bool  { return op >= x86asm.CMOVA && op <= x86asm.CMOVS }

// readsFlags reports whether op consumes the arithmetic flags.
func readsFlags(op x86asm.Op) bool {
	switch op {
	case x86asm.ADC, x86asm.SBB, x86asm.RCL, x86asm.RCR:
		return true
	}
	return isSetcc(op) || isCmov(op)
}

// writesFlags reports whether the instruction sets the arithmetic flags.
func writesFlags(in *disasm.Inst, x *x86asm.Inst) bool {
	switch in.Kind {
	case disasm.Nop, disasm.Jmp, disasm.Jcc, disasm.Ret, disasm.JmpInd:
		return false
	case disasm.Call, disasm.CallInd:
		return true // the callee leaves them undefined
	}
	if x.Op == 0 {
		return true
	}
	return !noFlags[x.Op] && !isSetcc(x.Op) && !isCmov(x.Op) && x.Op != x86asm.MOVSXD
}

// implicitWrites returns the registers op writes that are not its first
// explicit operand.
func implicitWrites(x *x86asm.Inst) uint32 {
	switch x.Op {
	case x86asm.MUL, x86asm.DIV, x86asm.IDIV:
		return 1<<rAX | 1<<rDX
	case x86asm.IMUL:
		if x.Args[1] == nil {
			return 1<<rAX | 1<<rDX
		}
	case x86asm.CDQ, x86asm.CQO, x86asm.CWD:
		return 1 << rDX
	case x86asm.CDQE, x86asm.CWDE, x86asm.CBW, x86asm.LAHF, x86asm.XLATB:
		return 1 << rAX
	case x86asm.CPUID:
		return 1<<rAX | 1<<rBX | 1<<rCX | 1<<rDX
	case x86asm.RDTSC, x86asm.RDPMC, x86asm.XGETBV, x86asm.RDMSR:
		return 1<<rAX | 1<<rDX
	case x86asm.RDTSCP:
		return 1<<rAX | 1<<rDX | 1<<rCX
	case x86asm.SYSCALL:
		return 1<<rAX | 1<<rCX | 1<<rR11
	case x86asm.CMPXCHG:
		return 1 << rAX
	case x86asm.CMPXCHG8B, x86asm.CMPXCHG16B:
		return 1<<rAX | 1<<rDX
	case x86asm.PUSH, x86asm.POP, x86asm.PUSHF, x86asm.POPF, x86asm.PUSHFQ, x86asm.POPFQ:
		return 1 << rSP
	case x86asm.LEAVE:
		return 1<<rSP | 1<<rBP
	case x86asm.ENTER:
		return 1<<rSP | 1<<rBP
	case x86asm.LOOP, x86asm.LOOPE, x86asm.LOOPNE:
		return 1 << rCX
	case x86asm.MOVSB, x86asm.MOVSW, x86asm.MOVSD, x86asm.MOVSQ, x86asm.CMPSB, x86asm.CMPSW,
		x86asm.CMPSD, x86asm.CMPSQ:
		return 1<<rSI | 1<<rDI | 1<<rCX
	case x86asm.STOSB, x86asm.STOSW, x86asm.STOSD, x86asm.STOSQ, x86asm.SCASB, x86asm.SCASW,
		x86asm.SCASD, x86asm.SCASQ:
		return 1<<rDI | 1<<rCX
	case x86asm.LODSB, x86asm.LODSW, x86asm.LODSD, x86asm.LODSQ:
		return 1<<rSI | 1<<rCX | 1<<rAX
	}
	return 0
}

// regWrites returns the mask of general-purpose registers (and flagMask for
// the flags) that the instruction may write. x is nil when the instruction
// did not decode: then it may write anything.
func regWrites(in *disasm.Inst, x *x86asm.Inst) uint32 {
	switch in.Kind {
	case disasm.Nop, disasm.Jmp, disasm.Jcc, disasm.JmpInd:
		if x != nil && in.Kind == disasm.Jcc {
			return implicitWrites(x) // loop decrements rcx
		}
		return 0
	case disasm.Call, disasm.CallInd:
		return callerSaved | flagMask
	case disasm.Ret:
		return 1 << rSP
	}
	if x == nil || x.Op == 0 {
		return allGPRs | flagMask
	}
	var m uint32
	if writesFlags(in, x) {
		m |= flagMask
	}
	m |= implicitWrites(x)
	if !noDest[x.Op] {
		if r, ok := x.Args[0].(x86asm.Reg); ok {
			if n, _, ok := gpr(r); ok {
				m |= 1 << n
			}
		}
	}
	switch x.Op {
	case x86asm.XCHG, x86asm.XADD, x86asm.MULX: // mulx writes its first two operands
		if r, ok := x.Args[1].(x86asm.Reg); ok {
			if n, _, ok := gpr(r); ok {
				m |= 1 << n
			}
		}
	}
	return m
}

// memArg returns the explicit memory operand of x and its position.
func memArg(x *x86asm.Inst) (x86asm.Mem, int, bool) {
	for i, a := range x.Args {
		if a == nil {
			break
		}
		if m, ok := a.(x86asm.Mem); ok {
			return m, i, true
		}
	}
	return x86asm.Mem{}, -1, false
}

// isMovLike lists moves whose value is their second operand.
func isMovLike(op x86asm.Op) bool {
	switch op {
	case x86asm.MOV, x86asm.MOVZX, x86asm.MOVSX, x86asm.MOVSXD, x86asm.MOVBE:
		return true
	}
	return false
}

// aluOps compute their destination from their explicit operands (and the
// flags, for the readsFlags ones) and nothing else.
var aluOps = map[x86asm.Op]bool{
	x86asm.ADD: true, x86asm.SUB: true, x86asm.AND: true, x86asm.OR: true, x86asm.XOR: true,
	x86asm.ADC: true, x86asm.SBB: true, x86asm.IMUL: true, x86asm.SHL: true, x86asm.SHR: true,
	x86asm.SAR: true, x86asm.ROL: true, x86asm.ROR: true, x86asm.RCL: true, x86asm.RCR: true,
	x86asm.NOT: true, x86asm.NEG: true, x86asm.INC: true, x86asm.DEC: true, x86asm.BSWAP: true,
	x86asm.BSF: true, x86asm.BSR: true, x86asm.LZCNT: true, x86asm.TZCNT: true, x86asm.POPCNT: true,
	x86asm.BTS: true, x86asm.BTR: true, x86asm.BTC: true, x86asm.SHLD: true, x86asm.SHRD: true,
	x86asm.ANDN: true, x86asm.BZHI: true, x86asm.SHLX: true, x86asm.SHRX: true, x86asm.SARX: true,
	x86asm.RORX: true, x86asm.BLSR: true, x86asm.BLSI: true, x86asm.BLSMSK: true, x86asm.PEXT: true,
	x86asm.PDEP: true, x86asm.CMP: true, x86asm.TEST: true, x86asm.BT: true,
}

// isStackSlot reports whether the memory operand names a fixed slot of the
// current stack frame: rsp-based, or rbp-based in a frame-pointer
// function, without index and segment.
func isStackSlot(m x86asm.Mem, framePointer bool) bool {
	if m.Index != 0 || m.Segment != 0 {
		return false
	}
	n, w, ok := gpr(m.Base)
	return ok && w == 8 && isFrameBase(n, framePointer)
}

func gnu(in *disasm.Inst, x *x86asm.Inst) string {
	if x == nil || x.Op == 0 {
		return "?"
	}
	return x86asm.GNUSyntax(*x, in.Addr, nil)
}

// RegWrites is regWrites for other packages: the general-purpose
// registers (bit n for register n, in x86asm's order from RAX) that in may
// write; x is nil when it did not decode (then every register).
func RegWrites(in *disasm.Inst, x *x86asm.Inst) uint32 { return regWrites(in, x) & allGPRs }

// GPRNumber is the number of the general-purpose register r names (any
// width), as RegWrites counts them; ok is false for other registers.
func GPRNumber(r x86asm.Reg) (n int, ok bool) {
	n, _, ok = gpr(r)
	return n, ok
}
