package patch

import (
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/twitchyliquid64/golang-asm/obj"
	"github.com/twitchyliquid64/golang-asm/obj/x86"

	"hgrewrite/abi"
)

// redZone is the part of the stack below rsp that leaf functions may use
// without moving rsp; trampolines step over it before pushing anything.
const redZone = abi.TrampolineRedZone

// snippet is a piece of assembled glue with the offsets of the fields the
// patcher fills in per use (a rel32, disp32 or imm64).
type snippet struct {
	code  []byte
	field int // offset of the patchable field, -1 if none
}

// templates are assembled once; every trampoline copies them.
type templates struct {
	enter, leave           snippet       // save/restore flags, rdi, rsi around an access call
	enterNF, leaveNF       snippet       // the same without the flags, where the code overwrites them first
	enterRange, leaveRange snippet       // the same plus rdx, for string instructions
	info                   snippet       // movabs $info, %rsi (imm64)
	callSlot               snippet       // call *slot(%rip) (disp32)
	leaRIP                 snippet       // lea target(%rip), %rdi (disp32)
	srcToRdi               snippet       // mov %rsi, %rdi
	countRcx               snippet       // mov %rcx, %rdx
	countOne               snippet       // mov $1, %edx
	pushRet                snippet       // push %rax; push %rax; lea ret(%rip), %rax; mov %rax, 8(%rsp); pop %rax (disp32 of the lea)
	jmpRel                 snippet       // jmp rel32
	ret                    snippet       // the default slot target
	entry                  entryTemplate // the call trace's glue at a function's entry (trace.go)
}

var (
	tplOnce sync.Once
	tpl     templates
	tplErr  error
)

func getTemplates() (*templates, error) {
	tplOnce.Do(func() { tplErr = tpl.build() })
	return &tpl, tplErr
}

func (t *templates) build() error {
	var err error
	one := func(field fieldKind, f func(a *assembler)) snippet {
		if err != nil {
			return snippet{}
		}
		a := newAssembler()
		f(a)
		var s snippet
		var offs []int
		s.code, offs, err = a.assemble()
		if err != nil {
			return s
		}
		s.field = -1
		switch field {
		case lastDisp32:
			s.field = len(s.code) - 4
		case lastImm64:
			s.field = len(s.code) - 8
		case disp32OfInst2:
			s.field = offs[3] - 4
		}
		return s
	}
	sp := reg(x86.REG_SP)
	t.enter = one(noField, func(a *assembler) {
		a.add(x86.ALEAQ, mem(x86.REG_SP, 0, 0, -redZone), sp)
		a.add(x86.APUSHFQ, none(), none())
		a.add(x86.APUSHQ, reg(x86.REG_DI), none())
		a.add(x86.APUSHQ, reg(x86.REG_SI), none())
	})
	t.leave = one(noField, func(a *assembler) {
		a.add(x86.APOPQ, none(), reg(x86.REG_SI))
		a.add(x86.APOPQ, none(), reg(x86.REG_DI))
		a.add(x86.APOPFQ, none(), none())
		a.add(x86.ALEAQ, mem(x86.REG_SP, 0, 0, redZone), sp)
	})
	t.enterNF = one(noField, func(a *assembler) {
		a.add(x86.ALEAQ, mem(x86.REG_SP, 0, 0, -redZone), sp)
		a.add(x86.APUSHQ, reg(x86.REG_DI), none())
		a.add(x86.APUSHQ, reg(x86.REG_SI), none())
	})
	t.leaveNF = one(noField, func(a *assembler) {
		a.add(x86.APOPQ, none(), reg(x86.REG_SI))
		a.add(x86.APOPQ, none(), reg(x86.REG_DI))
		a.add(x86.ALEAQ, mem(x86.REG_SP, 0, 0, redZone), sp)
	})
	t.enterRange = one(noField, func(a *assembler) {
		a.add(x86.ALEAQ, mem(x86.REG_SP, 0, 0, -redZone), sp)
		a.add(x86.APUSHFQ, none(), none())
		a.add(x86.APUSHQ, reg(x86.REG_DI), none())
		a.add(x86.APUSHQ, reg(x86.REG_SI), none())
		a.add(x86.APUSHQ, reg(x86.REG_DX), none())
	})
	t.leaveRange = one(noField, func(a *assembler) {
		a.add(x86.APOPQ, none(), reg(x86.REG_DX))
		a.add(x86.APOPQ, none(), reg(x86.REG_SI))
		a.add(x86.APOPQ, none(), reg(x86.REG_DI))
		a.add(x86.APOPFQ, none(), none())
		a.add(x86.ALEAQ, mem(x86.REG_SP, 0, 0, redZone), sp)
	})
	t.info = one(lastImm64, func(a *assembler) {
		a.add(x86.AMOVQ, imm(0x1122334455667788), reg(x86.REG_SI))
	})
	t.callSlot = one(lastDisp32, func(a *assembler) {
		a.add(obj.ACALL, none(), a.ripMem())
	})
	t.leaRIP = one(lastDisp32, func(a *assembler) {
		a.add(x86.ALEAQ, a.ripMem(), reg(x86.REG_DI))
	})
	t.srcToRdi = one(noField, func(a *assembler) {
		a.add(x86.AMOVQ, reg(x86.REG_SI), reg(x86.REG_DI))
	})
	t.countRcx = one(noField, func(a *assembler) {
		a.add(x86.AMOVQ, reg(x86.REG_CX), reg(x86.REG_DX))
	})
	t.countOne = one(noField, func(a *assembler) {
		a.add(x86.AMOVL, imm(1), reg(x86.REG_DX))
	})
	t.pushRet = one(disp32OfInst2, func(a *assembler) {
		a.add(x86.APUSHQ, reg(x86.REG_AX), none())
		a.add(x86.APUSHQ, reg(x86.REG_AX), none())
		a.add(x86.ALEAQ, a.ripMem(), reg(x86.REG_AX))
		a.add(x86.AMOVQ, reg(x86.REG_AX), mem(x86.REG_SP, 0, 0, 8))
		a.add(x86.APOPQ, none(), reg(x86.REG_AX))
	})
	t.jmpRel = one(lastDisp32, func(a *assembler) {
		p := a.add(obj.AJMP, none(), obj.Addr{Type: obj.TYPE_BRANCH, Sym: a.ctxt.Lookup("hg.target")})
		_ = p
	})
	t.ret = one(noField, func(a *assembler) {
		a.add(obj.ARET, none(), none())
	})
	if err != nil {
		return err
	}
	if t.entry, err = buildEntryTemplate(); err != nil {
		return err
	}
	return t.check()
}

type fieldKind int

const (
	noField fieldKind = iota
	lastDisp32
	lastImm64
	disp32OfInst2 // the disp32 that ends the third instruction
)

// check pins the encodings the patcher relies on, so a change in the
// assembler cannot silently produce different code.
func (t *templates) check() error {
	want := []struct {
		name string
		s    snippet
		n    int
	}{
		{"enter", t.enter, 8}, {"leave", t.leave, 11}, {"enterNF", t.enterNF, 7}, {"leaveNF", t.leaveNF, 10},
		{"info", t.info, 10},
		{"callSlot", t.callSlot, 6}, {"leaRIP", t.leaRIP, 7}, {"jmpRel", t.jmpRel, 5},
		{"pushRet", t.pushRet, 15}, {"ret", t.ret, 1},
	}
	for _, w := range want {
		if len(w.s.code) != w.n {
			return fmt.Errorf("assembler: %s glue is %d bytes, want %d (% x)", w.name, len(w.s.code), w.n, w.s.code)
		}
	}
	if t.jmpRel.code[0] != 0xe9 || t.callSlot.code[0] != 0xff {
		return fmt.Errorf("assembler: unexpected jump encoding % x / % x", t.jmpRel.code, t.callSlot.code)
	}
	return nil
}

// put appends s to buf and, when the snippet has a field, fills it with v
// (4 or 8 bytes).
func put(buf []byte, s snippet, v int64) []byte {
	start := len(buf)
	buf = append(buf, s.code...)
	if s.field >= 0 {
		if len(s.code)-s.field == 8 {
			binary.LittleEndian.PutUint64(buf[start+s.field:], uint64(v))
		} else {
			binary.LittleEndian.PutUint32(buf[start+s.field:], uint32(int32(v)))
		}
	}
	return buf
}

// putRel appends s, whose field is a disp32 that ends its instruction, with
// the field pointing at target. base is the address of buf[0].
func putRel(buf []byte, base uint64, s snippet, target uint64) ([]byte, error) {
	end := base + uint64(len(buf)) + uint64(s.field) + 4
	rel := int64(target - end)
	if rel != int64(int32(rel)) {
		return buf, fmt.Errorf("target %#x out of rel32 range from %#x", target, end)
	}
	return put(buf, s, rel), nil
}
