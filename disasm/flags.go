package disasm

import "golang.org/x/arch/x86/x86asm"

// FlagUse says how an instruction uses the arithmetic flags (OF SF ZF AF
// CF PF). The patcher needs it to leave out saving the flags around a
// runtime call when the code overwrites them before reading them.
type FlagUse uint8

const (
	FlagsUnknown FlagUse = iota // may read or partly write them: treat as a reader
	FlagsNone                   // neither reads nor writes them
	FlagsKill                   // writes all six without reading any
)

// FlagsUse reports how in uses the arithmetic flags.
//
// A call counts as writing them: the System V ABI preserves no status
// flag across a call and passes none in, so the code before a call cannot
// leave them for the callee or for what follows the call. (Hand-written
// assembly that returns a result in a flag is read after the call, where
// the reader is seen; one that takes a flag as input would break.)
func (in *Inst) FlagsUse() FlagUse {
	switch in.Kind {
	case Nop:
		return FlagsNone
	case Call, CallInd:
		return FlagsKill
	case Other:
	default:
		return FlagsUnknown // branches read them or leave the block
	}
	switch in.Op {
	case x86asm.ADD, x86asm.SUB, x86asm.CMP, x86asm.AND, x86asm.OR, x86asm.XOR, x86asm.TEST,
		x86asm.NEG, x86asm.XADD, x86asm.CMPXCHG:
		return FlagsKill
	case x86asm.IMUL, x86asm.MUL, x86asm.DIV, x86asm.IDIV, x86asm.BSF, x86asm.BSR, x86asm.POPCNT,
		x86asm.LZCNT, x86asm.TZCNT:
		// each sets some flags and leaves the others undefined: code that
		// reads any after it reads garbage, so none is live before it
		return FlagsKill
	case x86asm.SHL, x86asm.SHR, x86asm.SAR:
		// a shift by a count that is not 0 sets them (AF undefined); by
		// 0, or by %cl, which may be 0, it leaves them
		// (Target holds the immediate count of a shift without a
		// RIP-relative operand, and 0 for a count in %cl)
		if in.Flags&RIPRel == 0 && in.Target&0x3f != 0 {
			return FlagsKill
		}
		return FlagsUnknown
	case x86asm.MOV, x86asm.MOVZX, x86asm.MOVSX, x86asm.MOVSXD, x86asm.LEA, x86asm.PUSH, x86asm.POP,
		x86asm.MOVAPS, x86asm.MOVAPD, x86asm.MOVUPS, x86asm.MOVUPD, x86asm.MOVDQA, x86asm.MOVDQU,
		x86asm.MOVQ, x86asm.MOVD, x86asm.MOVSS, x86asm.MOVSD_XMM, x86asm.NOT, x86asm.BSWAP,
		x86asm.CDQE, x86asm.CDQ, x86asm.CQO, x86asm.CWDE, x86asm.XCHG, x86asm.PXOR, x86asm.XORPS,
		x86asm.PADDD, x86asm.PADDQ, x86asm.ADDSD, x86asm.ADDSS, x86asm.MULSD, x86asm.MULSS,
		x86asm.SUBSD, x86asm.SUBSS, x86asm.CVTSI2SD, x86asm.CVTSI2SS, x86asm.CVTTSD2SI:
		return FlagsNone
	}
	return FlagsUnknown
}
