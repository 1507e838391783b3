// Package disasm decodes x86-64 machine code into a compact instruction list
// that accounts for every byte of an executable section.
//
// It owns instruction decoding, the classification of control transfers,
// and the description of each instruction's memory operand: effective-address
// registers, access size, and whether the access reads, writes or both and is
// atomic. Decoding uses golang.org/x/arch/x86/x86asm; the encodings x86asm
// decodes wrongly or not at all (endbr64/endbr32, other 0f 1e hint NOPs,
// rdpid, adcx/adox, the length of vzeroupper/vzeroall, and the RIP base that
// its VEX/EVEX decoder drops) are handled in fixup.go, the only place that
// knows about them. Bytes that do not decode are kept as one-byte "bad"
// instructions so that the caller can count and report them.
package disasm

import (
	"sort"
	"strings"

	"golang.org/x/arch/x86/x86asm"
)

// Kind classifies an instruction by its effect on control flow.
type Kind uint8

const (
	Other   Kind = iota // falls through to the next instruction
	Jmp                 // direct unconditional jump (Target valid)
	Jcc                 // direct conditional jump, jrcxz, loop (Target valid)
	Call                // direct call (Target valid)
	Ret                 // return
	JmpInd              // indirect jump
	CallInd             // indirect call
	Stop                // ud2, hlt, int3: control does not fall through
	Nop                 // nop of any length, endbr64
	Bad                 // bytes that do not decode
)

// Access describes what an instruction does to its memory operand.
type Access uint8

const (
	Read       Access = 1 << iota // the instruction reads the operand
	Write                         // the instruction writes the operand
	Atomic                        // lock-prefixed, or xchg with memory
	Spin                          // set by the rewriter: a spinning-read-loop condition load or its counterpart write
	Ordered                       // set by the rewriter: an atomic load (acquire) or store (release) made with a plain move
	SpinStatic                    // with Spin: a spin variable at a fixed address, whose stores the rewriter marked
)

// Flags record properties of an instruction's encoding and operand.
type Flags uint16

const (
	HasMem      Flags = 1 << iota // Mem describes a memory operand that is accessed
	RIPRel                        // has a RIP-relative operand; DispOff locates its disp32
	StackMem                      // the memory operand is rsp-based
	FrameMem                      // the memory operand is rbp-based (stack if rbp is a frame pointer)
	TLSMem                        // the memory operand has an fs: or gs: segment
	StringOp                      // movs/stos/lods/cmps/scas: see StrSrc/StrDst
	Rep                           // rep/repe/repne prefix on a string instruction
	RepCond                       // repe/repne on cmps/scas: the count depends on data
	StrSrc                        // string op reads [rsi]
	StrDst                        // string op touches [rdi]
	Unsupported                   // memory operand the rewriter cannot instrument (VSIB, 32-bit addressing)
	Lock                          // lock prefix
	PushRBP                       // push %rbp
	MovRSPToRBP                   // mov %rsp, %rbp
	Filler                        // Bad bytes ending at a known entry point: padding or data, not code
)

// MemOp is an instruction's explicit memory operand.
type MemOp struct {
	Base, Index x86asm.Reg
	Scale       uint8
	Size        uint16 // bytes accessed per element
	Access      Access
	Disp        int64
}

// Inst is one decoded instruction, kept small: large binaries have millions.
type Inst struct {
	Addr    uint64
	Target  uint64 // branch target (Jmp/Jcc/Call); RIP-relative operand address; else an immediate
	Op      x86asm.Op
	Len     uint8
	Kind    Kind
	DispOff uint8 // offset of the RIP-relative disp32, when RIPRel
	Flags   Flags
	Mem     MemOp
}

// Section decodes code loaded at addr by a linear sweep. Every byte ends up
// in exactly one returned instruction; undecodable bytes become Bad.
//
// syncs are known instruction starts (function entries, sorted or not). An
// instruction that would swallow one is cut short: its bytes become a Bad
// instruction that ends at the sync point, and decoding resumes there. This
// keeps data embedded in code (tables in hand-written assembly) from hiding
// the code that follows it.
func Section(code []byte, addr uint64, syncs []uint64) []Inst {
	sorted := append([]uint64(nil), syncs...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	k := 0
	out := make([]Inst, 0, len(code)/4+1)
	for off := 0; off < len(code); {
		at := addr + uint64(off)
		for k < len(sorted) && sorted[k] <= at {
			k++
		}
		in := Decode(code[off:], at)
		if k < len(sorted) && at+uint64(in.Len) > sorted[k] {
			in = Inst{Addr: at, Len: uint8(sorted[k] - at), Kind: Bad, Flags: Filler}
		}
		out = append(out, in)
		off += int(in.Len)
	}
	return out
}

// Decode decodes the single instruction at the start of b, loaded at addr.
func Decode(b []byte, addr uint64) Inst {
	if name, n, ok := special(b); ok {
		in := Inst{Addr: addr, Len: uint8(n), Kind: Other}
		if name == "endbr64" || name == "endbr32" || name == "hintnop" {
			in.Kind = Nop
		}
		fallbackOperand(&in, b[:n], ModRMOffset(b[:n]), fallbackAccess[name])
		return in
	}
	x, err := x86asm.Decode(b, 64)
	if err == nil && x.Op != 0 && x.Len != 0 {
		return fromX86(&x, b, addr)
	}
	if n, ok := group7RegLength(b); ok {
		return Inst{Addr: addr, Len: uint8(n)}
	}
	if n, modrm, ok := xopLength(b); ok {
		in := Inst{Addr: addr, Len: uint8(n)}
		fallbackOperand(&in, b[:n], modrm, fallbackAccess["xop"])
		return in
	}
	if n, addr32 := stripPrefixesBeforeVEX(b); n > 0 {
		x, err := x86asm.Decode(b[n:], 64)
		if err == nil && x.Op != 0 && x.Len != 0 && x.Len+n <= 15 {
			in := fromX86(&x, b[n:], addr+uint64(n)) // targets count from the real end
			in.Addr = addr
			in.Len += uint8(n)
			if in.DispOff != 0 {
				in.DispOff += uint8(n)
			}
			if in.Flags&HasMem != 0 && (addr32 || hasSegment(b[:n])) {
				in.Flags |= Unsupported
			}
			return in
		}
	}
	return Inst{Addr: addr, Len: 1, Kind: Bad}
}

func hasSegment(prefixes []byte) bool {
	return hasPrefix(prefixes, 0x64) || hasPrefix(prefixes, 0x65)
}

// Full decodes the instruction at the start of b with all of x86asm's
// detail, with the fixups applied. The patcher uses it for the few
// instructions it relocates.
func Full(b []byte) (x86asm.Inst, error) {
	if _, n, ok := special(b); ok {
		return x86asm.Inst{Len: n}, nil
	}
	x, err := x86asm.Decode(b, 64)
	if err != nil {
		return x, err
	}
	fixRIPBase(&x, b)
	return x, nil
}

func fromX86(x *x86asm.Inst, b []byte, addr uint64) Inst {
	in := Inst{Addr: addr, Len: uint8(x.Len), Op: x.Op}
	next := addr + uint64(x.Len)
	in.Kind = kindOf(x)
	switch in.Kind {
	case Jmp, Jcc, Call:
		if rel, ok := x.Args[0].(x86asm.Rel); ok {
			in.Target = uint64(int64(next) + int64(rel))
		} else if in.Kind == Jmp {
			in.Kind = JmpInd
		} else if in.Kind == Call {
			in.Kind = CallInd
		}
	}
	switch {
	case x.Op == x86asm.PUSH && x.Args[0] == x86asm.RBP:
		in.Flags |= PushRBP
	case x.Op == x86asm.MOV && x.Args[0] == x86asm.RBP && x.Args[1] == x86asm.RSP:
		in.Flags |= MovRSPToRBP
	}
	if hasLockPrefix(x) {
		in.Flags |= Lock
	}
	if off := fixRIPBase(x, b); off >= 0 {
		in.Flags |= RIPRel
		in.DispOff = uint8(off)
	}
	describeMem(x, &in)
	if in.Flags&RIPRel != 0 {
		in.Target = uint64(int64(next) + ripDisp(x))
	} else if in.Kind == Other {
		in.Target = immediate(x)
	}
	return in
}

// ripDisp returns the displacement of the RIP-relative operand (lea has no
// access, so Mem may be empty).
func ripDisp(x *x86asm.Inst) int64 {
	for _, a := range x.Args {
		if m, ok := a.(x86asm.Mem); ok && m.Base == x86asm.RIP {
			return int64(int32(m.Disp))
		}
	}
	return 0
}

// immediate returns an instruction's immediate operand, which in
// position-dependent code may be a code address (mov $func, %edi).
func immediate(x *x86asm.Inst) uint64 {
	for _, a := range x.Args {
		if imm, ok := a.(x86asm.Imm); ok {
			return uint64(imm)
		}
	}
	return 0
}

func hasLockPrefix(x *x86asm.Inst) bool {
	for _, p := range x.Prefix {
		if p == 0 {
			break
		}
		if p&0xff == x86asm.PrefixLOCK {
			return true
		}
	}
	return false
}

func kindOf(x *x86asm.Inst) Kind {
	switch x.Op {
	case x86asm.JMP:
		return Jmp
	case x86asm.JA, x86asm.JAE, x86asm.JB, x86asm.JBE, x86asm.JE, x86asm.JG, x86asm.JGE,
		x86asm.JL, x86asm.JLE, x86asm.JNE, x86asm.JNO, x86asm.JNP, x86asm.JNS, x86asm.JO,
		x86asm.JP, x86asm.JS, x86asm.JCXZ, x86asm.JECXZ, x86asm.JRCXZ,
		x86asm.LOOP, x86asm.LOOPE, x86asm.LOOPNE:
		return Jcc
	case x86asm.CALL:
		return Call
	case x86asm.XBEGIN:
		return Jcc // falls through, or continues at the abort handler
	case x86asm.RET, x86asm.LRET, x86asm.IRET, x86asm.IRETD, x86asm.IRETQ:
		return Ret
	case x86asm.UD2, x86asm.UD1, x86asm.UD0, x86asm.HLT:
		return Stop
	case x86asm.INT:
		if imm, ok := x.Args[0].(x86asm.Imm); ok && imm == 3 {
			return Stop // int3: padding or a breakpoint, never falls through usefully
		}
	case x86asm.NOP:
		return Nop
	}
	return Other
}

// describeMem fills in.Mem and the operand flags from the decoded arguments.
func describeMem(x *x86asm.Inst, in *Inst) {
	if s := stringOp(x.Op); s != 0 {
		describeString(x, in, s)
		return
	}
	idx := -1
	var m x86asm.Mem
	for i, a := range x.Args {
		if a == nil {
			break
		}
		if mm, ok := a.(x86asm.Mem); ok {
			idx, m = i, mm
			break
		}
	}
	if idx < 0 {
		return
	}
	acc := accessOf(x.Op, idx)
	if acc == 0 {
		return
	}
	if x.Op == x86asm.XCHG || in.Flags&Lock != 0 {
		acc |= Atomic
	}
	in.Flags |= HasMem
	in.Mem = MemOp{Base: m.Base, Index: m.Index, Scale: m.Scale, Disp: memDisp(x, m), Access: acc, Size: uint16(x.MemBytes)}
	if in.Mem.Size == 0 {
		in.Mem.Size = implicitSize(x.Op)
	}
	switch {
	case m.Segment == x86asm.FS || m.Segment == x86asm.GS:
		in.Flags |= TLSMem
	case m.Base == x86asm.RSP || m.Base == x86asm.ESP:
		in.Flags |= StackMem
	case m.Base == x86asm.RBP:
		in.Flags |= FrameMem
	}
	// x86asm leaves AddrSize 0 on VEX/EVEX instructions: that is 64-bit.
	if x.AddrSize != 64 && x.AddrSize != 0 || isVector(m.Index) || (m.Base != 0 && m.Base != x86asm.RIP && !isGPR64(m.Base)) {
		in.Flags |= Unsupported
	}
}

// memDisp returns the operand's displacement as the CPU uses it: x86asm
// keeps a disp32 zero-extended, the CPU sign-extends it; only the moffs64 of
// movabs (opcodes a0-a3) is a full 64-bit address.
func memDisp(x *x86asm.Inst, m x86asm.Mem) int64 {
	if op := x.Opcode >> 24; m.Base == 0 && m.Index == 0 && op >= 0xa0 && op <= 0xa3 {
		return m.Disp // movabs moffs64: a full 64-bit address
	}
	return int64(int32(m.Disp))
}

func isGPR64(r x86asm.Reg) bool { return r >= x86asm.RAX && r <= x86asm.R15 }

func isVector(r x86asm.Reg) bool {
	return r != 0 && !isGPR64(r) && r != x86asm.RIP
}

// string instruction families
const (
	strMovs = 1 + iota
	strStos
	strLods
	strCmps
	strScas
)

func stringOp(op x86asm.Op) int {
	switch op {
	case x86asm.MOVSB, x86asm.MOVSW, x86asm.MOVSD, x86asm.MOVSQ:
		return strMovs
	case x86asm.STOSB, x86asm.STOSW, x86asm.STOSD, x86asm.STOSQ:
		return strStos
	case x86asm.LODSB, x86asm.LODSW, x86asm.LODSD, x86asm.LODSQ:
		return strLods
	case x86asm.CMPSB, x86asm.CMPSW, x86asm.CMPSD, x86asm.CMPSQ:
		return strCmps
	case x86asm.SCASB, x86asm.SCASW, x86asm.SCASD, x86asm.SCASQ:
		return strScas
	}
	return 0
}

func stringElemSize(op x86asm.Op) uint16 {
	switch op {
	case x86asm.MOVSB, x86asm.STOSB, x86asm.LODSB, x86asm.CMPSB, x86asm.SCASB:
		return 1
	case x86asm.MOVSW, x86asm.STOSW, x86asm.LODSW, x86asm.CMPSW, x86asm.SCASW:
		return 2
	case x86asm.MOVSD, x86asm.STOSD, x86asm.LODSD, x86asm.CMPSD, x86asm.SCASD:
		return 4
	}
	return 8
}

func describeString(x *x86asm.Inst, in *Inst, s int) {
	in.Flags |= HasMem | StringOp
	in.Mem = MemOp{Size: stringElemSize(x.Op)}
	for _, p := range x.Prefix {
		if p == 0 {
			break
		}
		switch p & 0xff {
		case x86asm.PrefixREP:
			in.Flags |= Rep
		case x86asm.PrefixREPN:
			in.Flags |= Rep
		}
	}
	if x.AddrSize != 64 {
		in.Flags |= Unsupported
	}
	switch s {
	case strMovs:
		in.Flags |= StrSrc | StrDst
		in.Mem.Access = Read | Write // read [rsi], write [rdi]
	case strStos:
		in.Flags |= StrDst
		in.Mem.Access = Write
	case strLods:
		in.Flags |= StrSrc
		in.Mem.Access = Read
	case strCmps:
		in.Flags |= StrSrc | StrDst
		in.Mem.Access = Read
	case strScas:
		in.Flags |= StrDst
		in.Mem.Access = Read
	}
	if in.Flags&Rep != 0 && (s == strCmps || s == strScas) {
		in.Flags |= RepCond
	}
}

var opAccess = buildOpAccess()

const (
	accRead  = 0xfc // reads its only (memory) operand: mul, div, fld, push, call
	accNone  = 0xff // no memory access at all (lea, nop, prefetch)
	accStore = 0xfe // writes a memory destination without reading it
	accCmp   = 0xfd // reads a memory destination only
)

func buildOpAccess() map[x86asm.Op]uint8 {
	m := map[x86asm.Op]uint8{}
	for op := x86asm.Op(1); op < 5000; op++ {
		name := op.String()
		if strings.HasPrefix(name, "Op(") {
			continue
		}
		switch {
		case name == "LEA" || name == "NOP" || strings.HasPrefix(name, "PREFETCH") ||
			strings.HasPrefix(name, "CLFLUSH") || name == "CLWB" || name == "CLDEMOTE" ||
			strings.HasPrefix(name, "BND") || name == "INVLPG" || name == "LFENCE" ||
			name == "MFENCE" || name == "SFENCE" || name == "PAUSE":
			m[op] = accNone
		case name == "CMP" || name == "TEST" || name == "BT" || strings.Contains(name, "COMIS") ||
			name == "PTEST" || name == "VPTEST" || strings.HasPrefix(name, "FCOM") ||
			strings.HasPrefix(name, "FICOM") || strings.HasPrefix(name, "FUCOM"):
			m[op] = accCmp
		case isStoreOp(name):
			m[op] = accStore
		case isReadOnlyOp(name):
			m[op] = accRead
		}
	}
	return m
}

// isReadOnlyOp lists instructions whose single explicit operand is a
// source even though it is argument 0.
func isReadOnlyOp(name string) bool {
	switch name {
	case "PUSH", "CALL", "JMP", "MUL", "IMUL", "DIV", "IDIV", "FLD", "FILD", "FBLD", "FLDCW",
		"FLDENV", "FRSTOR", "FXRSTOR", "FXRSTOR64", "XRSTOR", "XRSTOR64", "XRSTORS", "XRSTORS64",
		"LDMXCSR", "VLDMXCSR", "FADD", "FSUB", "FSUBR", "FMUL", "FDIV", "FDIVR", "FIADD", "FISUB",
		"FISUBR", "FIMUL", "FIDIV", "FIDIVR", "VERR", "VERW", "LGDT", "LIDT", "LLDT", "LMSW", "LTR",
		"PTWRITE":
		return true
	}
	return false
}

func isStoreOp(name string) bool {
	switch name {
	case "MOV", "MOVAPS", "MOVAPD", "MOVUPS", "MOVUPD", "MOVDQA", "MOVDQU", "MOVQ", "MOVD",
		"MOVSS", "MOVSD_XMM", "MOVNTI", "MOVNTPS", "MOVNTPD", "MOVNTDQ", "MOVNTQ", "MOVHPS",
		"MOVHPD", "MOVLPS", "MOVLPD", "MOVBE", "POP", "STMXCSR", "VSTMXCSR", "EXTRACTPS",
		"PEXTRB", "PEXTRW", "PEXTRD", "PEXTRQ", "FST", "FSTP", "FIST", "FISTP", "FISTTP",
		"FBSTP", "FNSTCW", "FNSTSW", "FNSTENV", "FNSAVE", "FXSAVE", "FXSAVE64", "XSAVE",
		"XSAVE64", "XSAVEOPT", "XSAVEOPT64", "XSAVEC", "XSAVEC64", "XSAVES", "XSAVES64",
		"SMSW", "SGDT", "SIDT", "SLDT", "STR", "MOVDIRI":
		return true
	}
	return strings.HasPrefix(name, "SET") || strings.HasPrefix(name, "VMOV") ||
		strings.HasPrefix(name, "VEXTRACT") || strings.HasPrefix(name, "VPEXTR") ||
		strings.HasPrefix(name, "VCVTPS2PH") || strings.HasPrefix(name, "VPMOV") ||
		strings.HasPrefix(name, "VCOMPRESS") || strings.HasPrefix(name, "VPCOMPRESS")
}

// implicitSize gives the operand size of instructions for which x86asm
// reports none.
func implicitSize(op x86asm.Op) uint16 {
	switch op {
	case x86asm.FLD, x86asm.FSTP, x86asm.FBLD, x86asm.FBSTP:
		return 10 // m80
	case x86asm.FXSAVE, x86asm.FXSAVE64, x86asm.FXRSTOR, x86asm.FXRSTOR64,
		x86asm.XSAVE, x86asm.XSAVE64, x86asm.XSAVEOPT, x86asm.XSAVEOPT64,
		x86asm.XRSTOR, x86asm.XRSTOR64:
		return 512 // the legacy area, at least
	case x86asm.FNSTENV, x86asm.FLDENV:
		return 28
	case x86asm.FNSAVE, x86asm.FRSTOR:
		return 108
	}
	return 1
}

// accessOf says how op uses the memory operand at argument position idx
// (Intel order: the destination is argument 0).
func accessOf(op x86asm.Op, idx int) Access {
	switch opAccess[op] {
	case accNone:
		return 0
	case accCmp:
		return Read
	case accStore:
		if idx == 0 {
			return Write
		}
		return Read
	}
	if idx == 0 {
		if opAccess[op] == accRead {
			return Read
		}
		return Read | Write
	}
	return Read
}
