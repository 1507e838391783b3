package patch

import (
	"encoding/binary"
	"fmt"

	"github.com/twitchyliquid64/golang-asm/obj/x86"

	"hgrewrite/disasm"
)

const (
	leaq  = x86.ALEAQ
	movq  = x86.AMOVQ
	movl  = x86.AMOVL
	regDI = x86.REG_DI
	regSI = x86.REG_SI
	regSP = x86.REG_SP
)

// relocate appends a copy of in that behaves, at its new address, exactly
// as the original did at its old one. buf starts at b.lay.TextAddr.
func (b *builder) relocate(buf []byte, in *disasm.Inst) ([]byte, error) {
	orig := b.code(in.Addr, uint64(in.Len))
	if orig == nil {
		return buf, fmt.Errorf("no bytes at %#x", in.Addr)
	}
	base := b.lay.TextAddr
	here := func() uint64 { return base + uint64(len(buf)) }
	switch in.Kind {
	case disasm.Bad:
		return buf, fmt.Errorf("undecodable instruction at %#x", in.Addr)
	case disasm.Jmp:
		return putRel(buf, base, b.t.jmpRel, in.Target)
	case disasm.Jcc:
		return b.relocateJcc(buf, in, orig)
	case disasm.Call:
		var err error
		if buf, err = b.pushReturn(buf, in); err != nil {
			return buf, err
		}
		return putRel(buf, base, b.t.jmpRel, in.Target)
	case disasm.CallInd:
		return b.relocateCallInd(buf, in, orig)
	}
	start := len(buf)
	buf = append(buf, orig...)
	if in.Flags&disasm.RIPRel != 0 {
		if err := fixRIP(buf[start:], in, here()); err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// fixRIP rewrites the disp32 of a copied RIP-relative instruction whose
// copy ends at end, so that it still addresses in.Target.
func fixRIP(code []byte, in *disasm.Inst, end uint64) error {
	rel := int64(in.Target - end)
	if rel != int64(int32(rel)) || int(in.DispOff)+4 > len(code) {
		return fmt.Errorf("RIP-relative operand of %#x out of reach", in.Addr)
	}
	binary.LittleEndian.PutUint32(code[in.DispOff:], uint32(int32(rel)))
	return nil
}

// pushReturn pushes the original return address of a call, so that
// returns, unwinding and backtraces see original code.
func (b *builder) pushReturn(buf []byte, in *disasm.Inst) ([]byte, error) {
	ret := in.Addr + uint64(in.Len)
	if !b.lay.PIE && ret < 0x80000000 {
		buf = append(buf, 0x68, 0, 0, 0, 0) // push $imm32 (sign-extended)
		binary.LittleEndian.PutUint32(buf[len(buf)-4:], uint32(ret))
		return buf, nil
	}
	return putRel(buf, b.lay.TextAddr, b.t.pushRet, ret)
}

// relocateJcc turns a conditional branch into its rel32 form. jrcxz and
// loop have no rel32 form: they branch over a jump to a jump.
func (b *builder) relocateJcc(buf []byte, in *disasm.Inst, orig []byte) ([]byte, error) {
	op := disasm.OpcodeOffset(orig)
	if op < 0 || op >= len(orig) {
		return buf, fmt.Errorf("jcc at %#x", in.Addr)
	}
	base := b.lay.TextAddr
	switch c := orig[op]; {
	case c >= 0x70 && c <= 0x7f:
		buf = append(buf, 0x0f, 0x80|c&0x0f, 0, 0, 0, 0)
	case c == 0x0f && op+1 < len(orig) && orig[op+1]&0xf0 == 0x80:
		buf = append(buf, 0x0f, orig[op+1], 0, 0, 0, 0)
	case c == 0xc7 && op+1 < len(orig) && orig[op+1] == 0xf8: // xbegin rel32 (or rel16 with 66: not emitted by compilers)
		if len(orig)-op != 6 {
			return buf, fmt.Errorf("xbegin form at %#x", in.Addr)
		}
		buf = append(buf, orig[:op+2]...)
		buf = append(buf, 0, 0, 0, 0)
	case c >= 0xe0 && c <= 0xe3: // loopne, loope, loop, jrcxz
		buf = append(buf, orig[:len(orig)-1]...)
		buf = append(buf, 2, 0xeb, 5) // taken: skip the short jump; not taken: jump over the long one
		return putRel(buf, base, b.t.jmpRel, in.Target)
	default:
		return buf, fmt.Errorf("unknown conditional branch % x at %#x", orig, in.Addr)
	}
	rel := int64(in.Target - (base + uint64(len(buf))))
	if rel != int64(int32(rel)) {
		return buf, fmt.Errorf("branch at %#x out of reach", in.Addr)
	}
	binary.LittleEndian.PutUint32(buf[len(buf)-4:], uint32(int32(rel)))
	return buf, nil
}

// relocateCallInd emulates `call *op` as a push of the original return
// address and `jmp *op`: the same bytes with ModRM.reg 2 changed to 4. An
// rsp-based operand is read 8 bytes further up, past the pushed address.
func (b *builder) relocateCallInd(buf []byte, in *disasm.Inst, orig []byte) ([]byte, error) {
	mr := disasm.ModRMOffset(orig)
	if mr < 0 || orig[mr-1] != 0xff || (orig[mr]>>3)&7 != 2 {
		return buf, fmt.Errorf("indirect call % x at %#x", orig, in.Addr)
	}
	jmp := append([]byte(nil), orig...)
	jmp[mr] = jmp[mr]&^0x38 | 4<<3
	if in.Flags&disasm.StackMem != 0 {
		mod := jmp[mr] >> 6
		switch {
		case mod == 1 && mr+2 < len(jmp) && int(int8(jmp[mr+2]))+8 <= 127:
			jmp[mr+2] = byte(int8(jmp[mr+2]) + 8)
		case mod == 2 && mr+6 <= len(jmp):
			d := int32(binary.LittleEndian.Uint32(jmp[mr+2:]))
			binary.LittleEndian.PutUint32(jmp[mr+2:], uint32(d+8))
		default:
			return buf, fmt.Errorf("rsp-based indirect call at %#x", in.Addr)
		}
	}
	var err error
	if buf, err = b.pushReturn(buf, in); err != nil {
		return buf, err
	}
	start := len(buf)
	buf = append(buf, jmp...)
	if in.Flags&disasm.RIPRel != 0 {
		if err := fixRIP(buf[start:], in, b.lay.TextAddr+uint64(len(buf))); err != nil {
			return buf, err
		}
	}
	return buf, nil
}
