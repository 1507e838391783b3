package patch

import (
	"strings"
	"testing"

	"golang.org/x/arch/x86/x86asm"
)

// TestEntryGlue pins the call-trace glue: it saves what it uses, touches
// no flags, reads the trace pointer through %fs, skips the update while the
// slot is 0, and puts the function's start and the return address where
// the runtime reads them (abi, "The call trace").
func TestEntryGlue(t *testing.T) {
	tpl, err := getTemplates()
	if err != nil {
		t.Fatal(err)
	}
	b := &builder{t: tpl, lay: Layout{TextAddr: 0x10000, SlotTrace: 0x20000}}
	code, err := b.entryGlue(nil, 0x401136)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	var slot, skipTo, popAt uint64
	for pc := 0; pc < len(code); {
		in, err := x86asm.Decode(code[pc:], 64)
		if err != nil {
			t.Fatalf("at %d: %v (% x)", pc, err, code)
		}
		next := uint64(0x10000 + pc + in.Len)
		m, isMem := in.Args[1].(x86asm.Mem)
		switch {
		case in.Op == x86asm.MOV && isMem && m.Base == x86asm.RIP:
			slot = next + uint64(m.Disp)
		case in.Op == x86asm.JRCXZ:
			skipTo = next + uint64(in.Args[0].(x86asm.Rel))
		case in.Op == x86asm.POP && popAt == 0:
			popAt = uint64(0x10000 + pc)
		}
		got = append(got, x86asm.IntelSyntax(in, uint64(0x10000+pc), nil))
		pc += in.Len
	}
	if slot != 0x20000 || skipTo != popAt {
		t.Errorf("slot read at %#x (want 0x20000), jrcxz to %#x (want the first pop, %#x)", slot, skipTo, popAt)
	}
	want := []string{
		"lea rsp, ptr [rsp-0x80]",
		"push rax",
		"push rcx",
		"push r11",
		"mov rcx, qword ptr [rip+",
		"jrcxz ",
		"mov rax, qword ptr fs:[rcx]",
		"movzx r11d, word ptr [rax]",
		"lea ecx, ptr [r11+0x10]",
		"mov word ptr [rax], cx",
		"lea rax, ptr [rax+r11+0x10]",
		"lea ecx, ptr [rsp+0x98]",
		"mov dword ptr [rax], ecx",
		"mov dword ptr [rax+0x4], 0x401136",
		"mov rcx, qword ptr [rsp+0x98]",
		"mov qword ptr [rax+0x8], rcx",
		"pop r11",
		"pop rcx",
		"pop rax",
		"lea rsp, ptr [rsp+0x80]",
	}
	if len(got) != len(want) {
		t.Fatalf("glue:\n%s", strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("instruction %d: %q, want %q", i, got[i], want[i])
		}
	}
}
