package disasm

import "golang.org/x/arch/x86/x86asm"

// FlagUse says how an instruction uses the arithmetic flags (OF SF ZF AF
// CF PF). The patcher needs it to leave out saving the flags around a
// runtime call when the code overwrites them before reading them.
type FlagUse uint8

const (
	FlagsUnknown FlagUse = iota // may read them: treat as a reader
	FlagsNone                   // neither reads nor writes them
	FlagsKill                   // writes all six without reading any
	// FlagsPass: does not read them, and writes some or (a shift by %cl,
	// a string compare that may run 0 times) maybe none. Whether the
	// flags are live before it is what they are after it, or less: a
	// scan for the next reader goes on past it.
	FlagsPass
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
	case x86asm.COMISS, x86asm.COMISD, x86asm.UCOMISS, x86asm.UCOMISD, x86asm.PTEST:
		// ZF, PF and CF (PTEST: ZF and CF) from the operands, the others
		// cleared
		return FlagsKill
	case x86asm.SHL, x86asm.SHR, x86asm.SAR:
		// a shift by a count that is not 0 sets them (AF undefined); by
		// 0, or by %cl, which may be 0, it leaves them
		// (Target holds the immediate count of a shift without a
		// RIP-relative operand, and 0 for a count in %cl)
		if in.Flags&RIPRel == 0 && in.Target&0x3f != 0 {
			return FlagsKill
		}
		return FlagsPass
	case x86asm.INC, x86asm.DEC, // all but CF
		x86asm.ROL, x86asm.ROR, // CF and OF, by a count that is not 0 (RCL and RCR read CF)
		x86asm.SHLD, x86asm.SHRD, // as a shift
		x86asm.BT, x86asm.BTS, x86asm.BTR, x86asm.BTC, // CF, the others undefined but ZF
		x86asm.CMPSB, x86asm.CMPSW, x86asm.CMPSD, x86asm.CMPSQ, // as CMP, unless a REP runs them 0 times
		x86asm.SCASB, x86asm.SCASW, x86asm.SCASD, x86asm.SCASQ:
		return FlagsPass
	}
	if flagsFree[in.Op] {
		return FlagsNone
	}
	return FlagsUnknown
}

// flagsFree is the instructions that neither read nor write the
// arithmetic flags: moves and the SSE and x87 data instructions that
// compilers put between a load or store and the flags' next reader or
// writer (a float compared after it is converted: zopfli's cost loop in
// pigz saved and restored the flags around its hottest access for a
// CVTSS2SD, and popf costs about as much as the whole check).
var flagsFree = func() map[x86asm.Op]bool {
	m := map[x86asm.Op]bool{}
	for _, op := range []x86asm.Op{
		x86asm.MOV, x86asm.MOVZX, x86asm.MOVSX, x86asm.MOVSXD, x86asm.LEA, x86asm.PUSH, x86asm.POP,
		x86asm.NOT, x86asm.BSWAP, x86asm.CDQE, x86asm.CDQ, x86asm.CQO, x86asm.CWDE, x86asm.CWD, x86asm.CBW,
		x86asm.XCHG, x86asm.MOVBE, x86asm.MOVNTI, x86asm.PREFETCHT0, x86asm.PREFETCHT1, x86asm.PREFETCHT2,
		x86asm.PREFETCHNTA, x86asm.PREFETCHW,
		x86asm.MOVSB, x86asm.MOVSW, x86asm.MOVSD, x86asm.MOVSQ, x86asm.STOSB, x86asm.STOSW, x86asm.STOSD,
		x86asm.STOSQ, x86asm.LODSB, x86asm.LODSW, x86asm.LODSD, x86asm.LODSQ,
		// SSE moves
		x86asm.MOVAPS, x86asm.MOVAPD, x86asm.MOVUPS, x86asm.MOVUPD, x86asm.MOVDQA, x86asm.MOVDQU,
		x86asm.MOVQ, x86asm.MOVD, x86asm.MOVSS, x86asm.MOVSD_XMM, x86asm.MOVHPS, x86asm.MOVLPS,
		x86asm.MOVHPD, x86asm.MOVLPD, x86asm.MOVHLPS, x86asm.MOVLHPS, x86asm.MOVDDUP, x86asm.MOVSHDUP,
		x86asm.MOVSLDUP, x86asm.LDDQU, x86asm.MOVNTDQ, x86asm.MOVNTPS, x86asm.MOVNTPD,
		x86asm.MOVMSKPS, x86asm.MOVMSKPD, x86asm.PMOVMSKB,
		// SSE arithmetic, logic, compares into registers, conversions
		x86asm.ADDSD, x86asm.ADDSS, x86asm.ADDPD, x86asm.ADDPS, x86asm.SUBSD, x86asm.SUBSS,
		x86asm.SUBPD, x86asm.SUBPS, x86asm.MULSD, x86asm.MULSS, x86asm.MULPD, x86asm.MULPS,
		x86asm.DIVSD, x86asm.DIVSS, x86asm.DIVPD, x86asm.DIVPS, x86asm.SQRTSD, x86asm.SQRTSS,
		x86asm.MAXSD, x86asm.MAXSS, x86asm.MINSD, x86asm.MINSS, x86asm.ANDPS, x86asm.ANDPD,
		x86asm.ANDNPS, x86asm.ANDNPD, x86asm.ORPS, x86asm.ORPD, x86asm.XORPS, x86asm.XORPD,
		x86asm.CMPSD_XMM, x86asm.CMPSS, x86asm.CMPPS, x86asm.CMPPD,
		x86asm.CVTSI2SD, x86asm.CVTSI2SS, x86asm.CVTTSD2SI, x86asm.CVTTSS2SI, x86asm.CVTSD2SI,
		x86asm.CVTSS2SI, x86asm.CVTSS2SD, x86asm.CVTSD2SS, x86asm.CVTPS2PD, x86asm.CVTPD2PS,
		x86asm.CVTDQ2PS, x86asm.CVTDQ2PD, x86asm.CVTTPS2DQ, x86asm.CVTTPD2DQ, x86asm.CVTPS2DQ,
		x86asm.CVTPD2DQ, x86asm.SHUFPS, x86asm.SHUFPD, x86asm.UNPCKLPS, x86asm.UNPCKHPS,
		x86asm.UNPCKLPD, x86asm.UNPCKHPD,
		x86asm.PXOR, x86asm.PAND, x86asm.PANDN, x86asm.POR, x86asm.PADDB, x86asm.PADDW, x86asm.PADDD,
		x86asm.PADDQ, x86asm.PSUBB, x86asm.PSUBW, x86asm.PSUBD, x86asm.PSUBQ, x86asm.PCMPEQB,
		x86asm.PCMPEQW, x86asm.PCMPEQD, x86asm.PCMPGTB, x86asm.PCMPGTW, x86asm.PCMPGTD,
		x86asm.PUNPCKLBW, x86asm.PUNPCKLWD, x86asm.PUNPCKLDQ, x86asm.PUNPCKLQDQ, x86asm.PUNPCKHBW,
		x86asm.PUNPCKHWD, x86asm.PUNPCKHDQ, x86asm.PUNPCKHQDQ, x86asm.PSHUFD, x86asm.PSHUFB,
		x86asm.PSHUFLW, x86asm.PSHUFHW, x86asm.PSLLW, x86asm.PSLLD, x86asm.PSLLQ, x86asm.PSRLW,
		x86asm.PSRLD, x86asm.PSRLQ, x86asm.PSRAW, x86asm.PSRAD, x86asm.PSLLDQ, x86asm.PSRLDQ,
		x86asm.PMULUDQ, x86asm.PMULLW, x86asm.PMULHW, x86asm.PMULLD, x86asm.PMINUB, x86asm.PMAXUB,
		x86asm.PMINSW, x86asm.PMAXSW, x86asm.PACKSSWB, x86asm.PACKUSWB, x86asm.PACKSSDW,
		x86asm.PALIGNR, x86asm.PINSRB, x86asm.PINSRW, x86asm.PINSRD, x86asm.PINSRQ, x86asm.PEXTRB,
		x86asm.PEXTRW, x86asm.PEXTRD, x86asm.PEXTRQ,
		// x87 loads, stores and arithmetic (FCOMI and FCMOV are not here)
		x86asm.FLD, x86asm.FST, x86asm.FSTP, x86asm.FILD, x86asm.FIST, x86asm.FISTP, x86asm.FISTTP,
		x86asm.FLDZ, x86asm.FLD1, x86asm.FXCH, x86asm.FADD, x86asm.FADDP, x86asm.FSUB, x86asm.FSUBP,
		x86asm.FSUBR, x86asm.FSUBRP, x86asm.FMUL, x86asm.FMULP, x86asm.FDIV, x86asm.FDIVP,
		x86asm.FDIVR, x86asm.FDIVRP, x86asm.FCHS, x86asm.FABS,
	} {
		m[op] = true
	}
	return m
}()
