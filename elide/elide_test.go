package elide

import (
	"testing"

	"golang.org/x/arch/x86/x86asm"

	"hgrewrite/cfg"
	"hgrewrite/disasm"
)

// oneBlock makes the analysis input of one function at 0x1000 made of
// the instructions codes, with a hook before instruction hookAt; at maps
// each instruction's address to its index.
func oneBlock(codes [][]byte, hookAt int) (in Input, at map[uint64]int) {
	const addr = 0x1000
	var code []byte
	at = map[uint64]int{}
	hook := uint64(0)
	for i, c := range codes {
		a := addr + uint64(len(code))
		at[a] = i
		if i == hookAt {
			hook = a
		}
		code = append(code, c...)
	}
	c := cfg.Code{Name: ".text", Addr: addr, Insts: disasm.Section(code, addr, nil), Instrument: true}
	g := cfg.Build(cfg.Input{Sections: []cfg.Code{c}, Funcs: []cfg.FuncHint{{Name: "f", Addr: addr, Size: uint64(len(code))}}})
	decode := func(a uint64) (x86asm.Inst, bool) {
		x, err := disasm.Full(code[a-addr:])
		return x, err == nil
	}
	return Input{Graph: g, Decode: decode, Hooked: func(a uint64) bool { return a == hook }}, at
}

// TestRedundant runs the analysis on one block and checks each access's
// verdict: repeats of the same or a weaker kind are redundant, a write
// after reads, a wider access, a changed base register, an atomic or a
// hook in between are not.
func TestRedundant(t *testing.T) {
	lines := []struct {
		code      []byte
		redundant bool
		what      string
	}{
		{[]byte{0x8b, 0x47, 0x08}, false, "mov eax, [rdi+8]: first"},
		{[]byte{0x8b, 0x4f, 0x08}, true, "mov ecx, [rdi+8]: read again"},
		{[]byte{0x89, 0x57, 0x08}, false, "mov [rdi+8], edx: a write after reads"},
		{[]byte{0x44, 0x8b, 0x47, 0x08}, true, "mov r8d, [rdi+8]: a read after the write"},
		{[]byte{0x48, 0x83, 0xc7, 0x04}, false, "add rdi, 4"},
		{[]byte{0x8b, 0x47, 0x08}, false, "mov eax, [rdi+8]: rdi changed"},
		{[]byte{0x8b, 0x06}, false, "mov eax, [rsi]: first"},
		{[]byte{0xf0, 0x83, 0x06, 0x01}, false, "lock add dword [rsi], 1: an atomic"},
		{[]byte{0x8b, 0x06}, false, "mov eax, [rsi]: after the atomic"},
		{[]byte{0x66, 0x8b, 0x06}, true, "mov ax, [rsi]: fewer bytes"},
		{[]byte{0x48, 0x8b, 0x06}, false, "mov rax, [rsi]: more bytes"},
		{[]byte{0x8b, 0x0a}, false, "mov ecx, [rdx]: first"},
		{[]byte{0x8b, 0x0a}, false, "mov ecx, [rdx]: a hook before it"},
		{[]byte{0xc3}, false, "ret"},
	}
	codes := make([][]byte, len(lines))
	for i, l := range lines {
		codes[i] = l.code
	}
	in, at := oneBlock(codes, 12)
	got := Redundant(in)
	for a, i := range at {
		if got[a] != lines[i].redundant {
			t.Errorf("%s: redundant %v, want %v", lines[i].what, got[a], lines[i].redundant)
		}
	}
	if len(got) != 3 {
		t.Errorf("%d redundant accesses, want 3: %v", len(got), got)
	}
}

// TestBatches runs the grouping on one block: accesses whose address
// registers stay unchanged since the group's first instruction join it;
// one whose register was written begins a new group; an atomic or a hook
// ends a group, a group of one is no group, and a stack access is never
// a member.
func TestBatches(t *testing.T) {
	lines := []struct {
		code  []byte
		group int // -1: none
		what  string
	}{
		{[]byte{0x8b, 0x47, 0x08}, 0, "mov eax, [rdi+8]: first of group 0"},
		{[]byte{0x89, 0x56, 0x10}, 0, "mov [rsi+16], edx: other registers"},
		{[]byte{0x8b, 0x04, 0x24}, -1, "mov eax, [rsp]: the stack"},
		{[]byte{0x8b, 0x08}, 1, "mov ecx, [rax]: rax was written since group 0 began: group 1 begins"},
		{[]byte{0x8b, 0x4f, 0x0c}, 1, "mov ecx, [rdi+12]"},
		{[]byte{0x8b, 0x0d, 0x00, 0x01, 0x00, 0x00}, 1, "mov ecx, [rip+0x100]: no register"},
		{[]byte{0xf0, 0x83, 0x06, 0x01}, -1, "lock add dword [rsi], 1: an atomic ends the group"},
		{[]byte{0x8b, 0x06}, -1, "mov eax, [rsi]: alone before the hook"},
		{[]byte{0x8b, 0x0a}, 2, "mov ecx, [rdx]: a hook before it"},
		{[]byte{0x8b, 0x4a, 0x04}, 2, "mov ecx, [rdx+4]"},
		{[]byte{0xc3}, -1, "ret"},
	}
	codes := make([][]byte, len(lines))
	for i, l := range lines {
		codes[i] = l.code
	}
	in, at := oneBlock(codes, 8)
	got := Batches(in)
	for a, i := range at {
		g, ok := got[a]
		if want := lines[i].group; (want < 0) == ok || ok && g != want {
			t.Errorf("%s: group %d (%v), want %d", lines[i].what, g, ok, want)
		}
	}
}
