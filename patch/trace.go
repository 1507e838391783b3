package patch

import (
	"encoding/binary"
	"fmt"

	"github.com/twitchyliquid64/golang-asm/obj/x86"

	"hgrewrite/abi"
)

// The call trace (abi: "The call trace"). Every function of the program
// appends an entry to its thread's trace when it is entered: its stack
// pointer, its start and its return address. Reports replay the trace to
// restore the callers of an access made earlier (runtime/detect,
// calltrace.go), as ThreadSanitizer replays its function entries and
// exits. Only entries are traced: a frame that has returned is known by
// the next entry at or above its stack pointer.
//
// The glue runs at a function's first instruction (after endbr64), many
// times per second in call-heavy code, so it makes no call and changes no
// flags: GCC's interprocedural register allocation lets a caller keep
// values in registers a local callee does not touch, r11 and the flags
// included, so everything the glue uses is saved and restored. It steps
// over the red zone as the access glue does. Until the runtime stores the
// trace pointer's offset in the slot (0 before), the glue does nothing
// (jrcxz needs no flags).

// entryTemplate is the assembled entry glue with its two fields.
type entryTemplate struct {
	code []byte
	slot int // offset of the disp32 of mov slot(%rip), %rcx, which ends its instruction
	fn   int // offset of the imm32 function start
}

// fsPrefix is the %fs segment-override prefix, put before the load of the
// thread's trace pointer: golang-asm has no syntax for a segment override
// with a register base.
const fsPrefix = 0x64

// entrySaved is how far the glue's rsp is below the program's when it
// reads the return address: the red zone and three registers.
const entrySaved = redZone + 24

func buildEntryTemplate() (entryTemplate, error) {
	var t entryTemplate
	sp := reg(x86.REG_SP)
	part := func(f func(a *assembler)) ([]byte, []int, error) {
		a := newAssembler()
		f(a)
		return a.assemble()
	}
	head, _, err := part(func(a *assembler) {
		a.add(leaq, mem(regSP, 0, 0, -redZone), sp)
		a.add(x86.APUSHQ, reg(x86.REG_AX), none())
		a.add(x86.APUSHQ, reg(x86.REG_CX), none())
		a.add(x86.APUSHQ, reg(x86.REG_R11), none())
		a.add(movq, a.ripMem(), reg(x86.REG_CX))
	})
	if err != nil {
		return t, err
	}
	load, _, err := part(func(a *assembler) { a.add(movq, mem(x86.REG_CX, 0, 0, 0), reg(x86.REG_AX)) })
	if err != nil {
		return t, err
	}
	load = append([]byte{fsPrefix}, load...)
	const fnMark = 0x7eadbeef
	body, offs, err := part(func(a *assembler) {
		// pos = trace->pos (16 bits); trace->pos = pos + TraceEntry, wrapping
		a.add(x86.AMOVWLZX, mem(x86.REG_AX, 0, 0, 0), reg(x86.REG_R11))
		a.add(x86.ALEAL, mem(x86.REG_R11, 0, 0, abi.TraceEntry), reg(x86.REG_CX))
		a.add(x86.AMOVW, reg(x86.REG_CX), mem(x86.REG_AX, 0, 0, 0))
		a.add(leaq, mem(x86.REG_AX, x86.REG_R11, 1, abi.TraceHeader), reg(x86.REG_AX))
		// word 0: rsp at the entry (low 32 bits) | the function's start << 32
		a.add(x86.ALEAL, mem(regSP, 0, 0, entrySaved), reg(x86.REG_CX))
		a.add(x86.AMOVL, reg(x86.REG_CX), mem(x86.REG_AX, 0, 0, 0))
		a.add(x86.AMOVL, imm(fnMark), mem(x86.REG_AX, 0, 0, 4))
		// word 1: the return address
		a.add(movq, mem(regSP, 0, 0, entrySaved), reg(x86.REG_CX))
		a.add(movq, reg(x86.REG_CX), mem(x86.REG_AX, 0, 0, 8))
	})
	if err != nil {
		return t, err
	}
	tail, _, err := part(func(a *assembler) {
		a.add(x86.APOPQ, none(), reg(x86.REG_R11))
		a.add(x86.APOPQ, none(), reg(x86.REG_CX))
		a.add(x86.APOPQ, none(), reg(x86.REG_AX))
		a.add(leaq, mem(regSP, 0, 0, redZone), sp)
	})
	if err != nil {
		return t, err
	}
	skip := len(load) + len(body)
	if skip > 127 {
		return t, fmt.Errorf("assembler: entry glue of %d bytes is out of jrcxz's reach", skip)
	}
	t.slot = len(head) - 4
	t.code = append(append([]byte{}, head...), 0xe3, byte(skip)) // jrcxz over the trace's update
	t.code = append(t.code, load...)
	t.fn = len(t.code) + offs[7] - 4
	t.code = append(t.code, body...)
	t.code = append(t.code, tail...)
	if binary.LittleEndian.Uint32(t.code[t.fn:]) != fnMark {
		return t, fmt.Errorf("assembler: entry glue's function field not found (% x)", t.code)
	}
	return t, nil
}

// entryGlue appends the call-trace glue of the function starting at fn
// (its link-time address, or 0 when it does not fit 32 bits).
func (b *builder) entryGlue(buf []byte, fn uint64) ([]byte, error) {
	t := &b.t.entry
	start := len(buf)
	buf = append(buf, t.code...)
	end := b.lay.TextAddr + uint64(start+t.slot+4)
	rel := int64(b.lay.SlotTrace - end)
	if rel != int64(int32(rel)) {
		return buf[:start], fmt.Errorf("trace slot %#x out of rel32 range from %#x", b.lay.SlotTrace, end)
	}
	binary.LittleEndian.PutUint32(buf[start+t.slot:], uint32(int32(rel)))
	if fn >= 1<<32 || fn >= abi.TraceMarkReset {
		fn = 0
	}
	binary.LittleEndian.PutUint32(buf[start+t.fn:], uint32(fn))
	return buf, nil
}
