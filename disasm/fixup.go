package disasm

import "golang.org/x/arch/x86/x86asm"

// This file is the one place that works around gaps in x86asm (see the
// package doc). Every function here is covered by fixup_test.go.

// legacyPrefix reports whether b is a legacy x86 prefix byte.
func legacyPrefix(b byte) bool {
	switch b {
	case 0x66, 0x67, 0xf2, 0xf3, 0xf0, 0x2e, 0x36, 0x3e, 0x26, 0x64, 0x65:
		return true
	}
	return false
}

// encoding describes where the parts of an instruction sit in its bytes.
type encoding struct {
	prefixEnd int  // index of the first byte after legacy prefixes and REX
	opEnd     int  // index of the first byte after the opcode (and VEX/EVEX payload)
	vex       bool // VEX or EVEX encoded
	rexW      bool
	opMap     int // 0: one-byte, 1: 0f, 2: 0f38, 3: 0f3a
	op        byte
}

// VectorEncoding reports whether the instruction in b is VEX or EVEX
// encoded (writes vector state past xmm's low 128 bits may follow), and
// whether it is EVEX (AVX-512 state), from its bytes. An AMD XOP
// instruction (8f with an opcode map of 8 or more) counts as VEX.
func VectorEncoding(b []byte) (vex, evex bool) {
	e, ok := scanEncoding(b)
	if !ok {
		return false, false
	}
	if p := e.prefixEnd; e.vex {
		return true, b[p] == 0x62
	} else if p+1 < len(b) && b[p] == 0x8f && b[p+1]&0x1f >= 8 {
		return true, false
	}
	return false, false
}

// scanEncoding finds prefixes, the opcode map and the opcode byte. It does
// not know which opcodes take a ModRM byte; callers that need one ask for it.
func scanEncoding(b []byte) (encoding, bool) {
	var e encoding
	i := 0
	for i < len(b) && i < 14 && legacyPrefix(b[i]) {
		i++
	}
	if i < len(b) && b[i]&0xf0 == 0x40 {
		e.rexW = b[i]&8 != 0
		i++
	}
	e.prefixEnd = i
	if i >= len(b) {
		return e, false
	}
	switch b[i] {
	case 0xc5: // two-byte VEX: c5 RvvvvLpp op
		if i+2 >= len(b) {
			return e, false
		}
		e.vex, e.opMap, e.op, e.opEnd = true, 1, b[i+2], i+3
		return e, true
	case 0xc4: // three-byte VEX: c4 RXBmmmmm WvvvvLpp op
		if i+3 >= len(b) {
			return e, false
		}
		e.vex, e.opMap, e.op, e.opEnd = true, int(b[i+1]&0x1f), b[i+3], i+4
		e.rexW = b[i+2]&0x80 != 0
		return e, true
	case 0x62: // EVEX (always, in 64-bit mode): 62 P0 P1 P2 op
		if i+4 >= len(b) {
			return e, false
		}
		e.vex, e.opMap, e.op, e.opEnd = true, int(b[i+1]&0x07), b[i+4], i+5
		e.rexW = b[i+2]&0x80 != 0
		return e, true
	case 0x0f:
		if i+1 >= len(b) {
			return e, false
		}
		switch b[i+1] {
		case 0x38, 0x3a:
			if i+2 >= len(b) {
				return e, false
			}
			e.opMap = 2
			if b[i+1] == 0x3a {
				e.opMap = 3
			}
			e.op, e.opEnd = b[i+2], i+3
		default:
			e.opMap, e.op, e.opEnd = 1, b[i+1], i+2
		}
		return e, true
	}
	e.op, e.opEnd = b[i], i+1
	return e, true
}

// modrmLen returns the number of bytes taken by the ModRM byte at b[0], its
// SIB byte and its displacement (64-bit addressing).
func modrmLen(b []byte) (int, bool) {
	if len(b) == 0 {
		return 0, false
	}
	mod, rm := b[0]>>6, b[0]&7
	n := 1
	if mod == 3 {
		return n, true
	}
	if rm == 4 { // SIB
		if len(b) < 2 {
			return 0, false
		}
		n++
		if mod == 0 && b[1]&7 == 5 {
			n += 4
		}
	} else if mod == 0 && rm == 5 {
		n += 4 // rip-relative disp32
	}
	switch mod {
	case 1:
		n++
	case 2:
		n += 4
	}
	return n, len(b) >= n
}

// ripRelDispOffset returns the offset of the disp32 of a RIP-relative ModRM
// operand in an instruction whose ModRM follows the opcode, or -1.
func ripRelDispOffset(b []byte) int {
	e, ok := scanEncoding(b)
	if !ok || e.opEnd >= len(b) {
		return -1
	}
	m := b[e.opEnd]
	if m>>6 == 0 && m&7 == 5 {
		return e.opEnd + 1
	}
	return -1
}

// special decodes the encodings that x86asm gets wrong or cannot decode,
// before x86asm sees them. ok is false when b is not one of them.
//   - endbr64/endbr32 (f3 0f 1e fa/fb) come back from x86asm as a 1-byte rep;
//   - the other 0f 1e (rdssp and reserved hint NOPs) likewise;
//   - rdpid (f3 0f c7 /7, register form), adcx/adox (66/f3 0f 38 f6) come
//     back as Op == 0;
//   - vzeroupper/vzeroall (VEX 0f 77) are given a length one too long.
func special(b []byte) (name string, length int, ok bool) {
	e, ok := scanEncoding(b)
	if !ok {
		return "", 0, false
	}
	switch {
	case !e.vex && e.opMap == 1 && e.op == 0x1e:
		if e.opEnd < len(b) && (b[e.opEnd] == 0xfa || b[e.opEnd] == 0xfb) && e.prefixEnd == 1 && b[0] == 0xf3 {
			if b[e.opEnd] == 0xfa {
				return "endbr64", e.opEnd + 1, true
			}
			return "endbr32", e.opEnd + 1, true
		}
		n, ok := modrmLen(b[e.opEnd:])
		if !ok {
			return "", 0, false
		}
		return "hintnop", e.opEnd + n, true
	case !e.vex && e.opMap == 1 && e.op == 0xc7 && e.opEnd < len(b) && b[e.opEnd]>>6 == 3 && (b[e.opEnd]>>3)&7 == 7 && hasPrefix(b[:e.prefixEnd], 0xf3):
		return "rdpid", e.opEnd + 1, true
	case !e.vex && e.opMap == 1 && e.op == 0xc7 && e.opEnd < len(b) && b[e.opEnd]>>6 == 3 && (b[e.opEnd]>>3)&7 >= 6:
		return "rdrand/rdseed", e.opEnd + 1, true
	case !e.vex && e.opMap == 2 && e.opEnd < len(b) && b[e.opEnd]>>6 != 3 &&
		(e.op == 0xf6 && !hasPrefix(b[:e.prefixEnd], 0x66) && !hasPrefix(b[:e.prefixEnd], 0xf3) ||
			e.op == 0xf5 && hasPrefix(b[:e.prefixEnd], 0x66) || e.op == 0xf9 && e.prefixEnd == 0):
		// wrss (0f 38 f6), wruss (66 0f 38 f5), movdiri (0f 38 f9): memory stores
		n, ok := modrmLen(b[e.opEnd:])
		if !ok {
			return "", 0, false
		}
		if e.op == 0xf9 {
			return "movdiri", e.opEnd + n, true
		}
		return "wrss", e.opEnd + n, true
	case !e.vex && e.opMap == 1 && e.op == 0x01 && e.opEnd < len(b) && b[e.opEnd]>>6 != 3 && (b[e.opEnd]>>3)&7 == 5 && hasPrefix(b[:e.prefixEnd], 0xf3):
		n, ok := modrmLen(b[e.opEnd:])
		if !ok {
			return "", 0, false
		}
		return "rstorssp", e.opEnd + n, true
	case !e.vex && e.opMap == 1 && e.op == 0xae && e.opEnd < len(b) && b[e.opEnd]>>6 == 3 && (b[e.opEnd]>>3)&7 == 5 && hasPrefix(b[:e.prefixEnd], 0xf3):
		return "incssp", e.opEnd + 1, true // CET shadow stack (glibc's longjmp)
	case !e.vex && e.opMap == 1 && (e.op == 0xa6 || e.op == 0xa7) && e.opEnd < len(b) && b[e.opEnd]>>6 == 3:
		// VIA PadLock (xsha*, xcrypt*, montmul): implicit operands only.
		return "padlock", e.opEnd + 1, true
	case !e.vex && e.opMap == 2 && e.op == 0xf6 && (hasPrefix(b[:e.prefixEnd], 0xf3) || hasPrefix(b[:e.prefixEnd], 0x66)):
		n, ok := modrmLen(b[e.opEnd:])
		if !ok {
			return "", 0, false
		}
		if hasPrefix(b[:e.prefixEnd], 0xf3) {
			return "adox", e.opEnd + n, true
		}
		return "adcx", e.opEnd + n, true
	case e.vex && e.opMap == 1 && e.op == 0x77 && b[e.prefixEnd] != 0x62:
		if b[e.prefixEnd] == 0xc5 && b[e.prefixEnd+1]&4 != 0 || b[e.prefixEnd] == 0xc4 && b[e.prefixEnd+2]&4 != 0 {
			return "vzeroall", e.opEnd, true
		}
		return "vzeroupper", e.opEnd, true
	}
	return "", 0, false
}

// xopLength returns the length of an AMD XOP instruction (8f with a map
// select of 8 or more), which x86asm does not decode: 8f, two payload
// bytes, opcode, ModRM with SIB and displacement, then an imm8 in map 8 or
// an imm32 in map 10. modrm is the offset of the ModRM byte.
func xopLength(b []byte) (n, modrm int, ok bool) {
	i := 0
	for i < len(b) && i < 14 && legacyPrefix(b[i]) {
		i++
	}
	if i+4 >= len(b) || b[i] != 0x8f || b[i+1]&0x1f < 8 {
		return 0, 0, false
	}
	m, ok := modrmLen(b[i+4:])
	if !ok {
		return 0, 0, false
	}
	n = i + 4 + m
	switch b[i+1] & 0x1f {
	case 8:
		n++
	case 10:
		n += 4
	}
	return n, i + 4, n <= len(b) && n <= 15
}

// group7RegLength returns the length of a register-form 0f 01 instruction
// (rdpkru, wrpkru, xgetbv, rdtscp, serialize, xend, ...; ModRM mod=3, no
// operands beyond the opcode bytes), some of which x86asm does not know.
func group7RegLength(b []byte) (int, bool) {
	e, ok := scanEncoding(b)
	if !ok || e.vex || e.opMap != 1 || e.op != 0x01 || e.opEnd >= len(b) || b[e.opEnd]>>6 != 3 {
		return 0, false
	}
	return e.opEnd + 1, true
}

// stripPrefixesBeforeVEX handles legacy prefixes in front of a VEX prefix
// (67 or segment overrides, which assemblers use as padding) or EVEX,
// which x86asm rejects: it returns how many such prefixes there are when a VEX prefix
// follows them, and whether one of them is the address-size override.
func stripPrefixesBeforeVEX(b []byte) (n int, addr32 bool) {
	for n < len(b) && n < 14 {
		switch b[n] {
		case 0x67:
			addr32 = true
		case 0x2e, 0x36, 0x3e, 0x26, 0x64, 0x65:
		default:
			if b[n] == 0xc4 || b[n] == 0xc5 || b[n] == 0x62 {
				return n, addr32
			}
			return 0, false
		}
		n++
	}
	return 0, false
}

// fallbackAccess says what the instructions decoded here (not by x86asm)
// do with a ModRM memory operand.
var fallbackAccess = map[string]Access{
	"adox": Read, "adcx": Read, "wrss": Write, "movdiri": Write, "rstorssp": Read | Write, "xop": Read,
}

// fallbackOperand describes the ModRM memory operand at b[modrm] of an
// instruction decoded here: it is marked Unsupported (its registers are not
// decoded, so it is not instrumented) but a RIP-relative displacement is
// located, so that the instruction can still be relocated.
func fallbackOperand(in *Inst, b []byte, modrm int, acc Access) {
	if acc == 0 || modrm < 0 || modrm >= len(b) || b[modrm]>>6 == 3 {
		return
	}
	in.Flags |= HasMem | Unsupported
	in.Mem = MemOp{Access: acc, Size: 8}
	if b[modrm]>>6 == 0 && b[modrm]&7 == 5 && modrm+5 <= len(b) {
		disp := int32(uint32(b[modrm+1]) | uint32(b[modrm+2])<<8 | uint32(b[modrm+3])<<16 | uint32(b[modrm+4])<<24)
		in.Flags |= RIPRel
		in.DispOff = uint8(modrm + 1)
		in.Target = uint64(int64(in.Addr) + int64(in.Len) + int64(disp))
	}
}

func hasPrefix(prefixes []byte, p byte) bool {
	for _, b := range prefixes {
		if b == p {
			return true
		}
	}
	return false
}

// fixRIPBase restores the RIP base that x86asm's VEX/EVEX decoder drops from
// RIP-relative memory operands (mod=00, rm=101): it returns the offset of the
// disp32, or -1 when the instruction is not RIP-relative.
func fixRIPBase(inst *x86asm.Inst, b []byte) int {
	if inst.PCRel != 0 {
		if inst.PCRelOff > 0 && isRIPMem(inst) {
			return inst.PCRelOff
		}
		return -1
	}
	// Only the VEX/EVEX decoder drops the base; for legacy encodings
	// PCRel is authoritative (and a movabs moffs64 has no ModRM at all).
	if e, ok := scanEncoding(b[:inst.Len]); !ok || !e.vex {
		return -1
	}
	off := ripRelDispOffset(b[:inst.Len])
	if off < 0 {
		return -1
	}
	for i, a := range inst.Args {
		if m, ok := a.(x86asm.Mem); ok && m.Base == 0 && m.Index == 0 {
			m.Base = x86asm.RIP
			inst.Args[i] = m
			return off
		}
	}
	return -1
}

func isRIPMem(inst *x86asm.Inst) bool {
	for _, a := range inst.Args {
		if m, ok := a.(x86asm.Mem); ok && m.Base == x86asm.RIP {
			return true
		}
	}
	return false
}

// ModRMOffset returns the offset of the ModRM byte of an instruction whose
// opcode takes one, or -1 if the bytes cannot be parsed.
func ModRMOffset(b []byte) int {
	e, ok := scanEncoding(b)
	if !ok || e.opEnd >= len(b) {
		return -1
	}
	return e.opEnd
}

// OpcodeOffset returns the offset of the first opcode byte (after legacy
// prefixes and REX), or -1.
func OpcodeOffset(b []byte) int {
	e, ok := scanEncoding(b)
	if !ok {
		return -1
	}
	return e.prefixEnd
}
