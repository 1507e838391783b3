package elide

import (
	"testing"

	"golang.org/x/arch/x86/x86asm"

	"hgrewrite/cfg"
	"hgrewrite/disasm"
)

// line is one instruction of a flow case and whether its check is
// redundant.
type line struct {
	code      []byte
	redundant bool
	what      string
}

// flowCase runs Redundant over the function the lines make (one function
// at 0x1000, split into blocks by its jumps), after edit changes the
// input, and checks every line's verdict.
func flowCase(t *testing.T, name string, lines []line, edit func(in *Input, addr func(int) uint64)) {
	t.Helper()
	codes := make([][]byte, len(lines))
	for i, l := range lines {
		codes[i] = l.code
	}
	in, at := oneBlock(codes, -1)
	addrOf := map[int]uint64{}
	for a, i := range at {
		addrOf[i] = a
	}
	if edit != nil {
		edit(&in, func(i int) uint64 { return addrOf[i] })
	}
	got := Redundant(in)
	for a, i := range at {
		if got[a] != lines[i].redundant {
			t.Errorf("%s: %s: redundant %v, want %v", name, lines[i].what, got[a], lines[i].redundant)
		}
	}
}

// diamond is an if/else whose arms are then and els (each an access),
// joined by join; the joined access is redundant when want says so.
func diamond(then, els, join []byte, want bool) []line {
	return []line{
		{[]byte{0x85, 0xc0}, false, "test eax, eax"},
		{[]byte{0x74, byte(len(then) + 2)}, false, "je else"},
		{then, false, "then arm's access"},
		{[]byte{0xeb, byte(len(els))}, false, "jmp join"},
		{els, false, "else arm's access"},
		{join, want, "join's access"},
		{[]byte{0xc3}, false, "ret"},
	}
}

var (
	readRDI8  = []byte{0x8b, 0x4f, 0x08}       // mov ecx, [rdi+8]
	readRDI16 = []byte{0x8b, 0x57, 0x10}       // mov edx, [rdi+16]
	read2RDI8 = []byte{0x66, 0x8b, 0x4f, 0x08} // mov cx, [rdi+8]
)

// TestRedundantAcrossBlocks: a check made on every path into a block
// stands for the block's repeat of it, with the fewer bytes of the
// paths' checks; one made on only some paths, or before a call, a
// loop-exit hook or a block the patcher failed on, or in a function
// with an indirect jump, does not.
func TestRedundantAcrossBlocks(t *testing.T) {
	flowCase(t, "both arms", diamond(readRDI8, readRDI8, readRDI8, true), nil)
	flowCase(t, "one arm", diamond(readRDI8, readRDI16, readRDI8, false), nil)
	flowCase(t, "two bytes on one arm, four after", diamond(read2RDI8, readRDI8, readRDI8, false), nil)
	flowCase(t, "two bytes on one arm, two after", diamond(read2RDI8, readRDI8, read2RDI8, true), nil)
	readWrite := []byte{0x8b, 0x4f, 0x08, 0x89, 0x4f, 0x08} // mov ecx, [rdi+8]; mov [rdi+8], ecx
	flowCase(t, "a read and a write on both arms, a write after", diamond(readWrite, readWrite, []byte{0x89, 0x57, 0x08}, true), nil)
	flowCase(t, "exit hook on the then arm", diamond(readRDI8, readRDI8, readRDI8, false), func(in *Input, addr func(int) uint64) {
		then := addr(2)
		in.ExitHooked = func(blk uint64) bool { return blk == then }
	})
	flowCase(t, "else arm not patched", diamond(readRDI8, readRDI8, readRDI8, false), func(in *Input, addr func(int) uint64) {
		els := addr(4)
		in.Unchecked = func(blk uint64) bool { return blk == els }
	})
	flowCase(t, "join in a function whose landing pads are unknown", diamond(readRDI8, readRDI8, readRDI8, false), func(in *Input, addr func(int) uint64) {
		join := addr(5)
		in.Unknown = func(blk uint64) bool { return blk == join }
	})
	flowCase(t, "a call between", []line{
		{[]byte{0x8b, 0x43, 0x08}, false, "mov eax, [rbx+8]"},
		{[]byte{0xe8, 0x03, 0x00, 0x00, 0x00}, false, "call f"},
		{[]byte{0x8b, 0x4b, 0x08}, false, "mov ecx, [rbx+8]: after the call (rbx is callee-saved)"},
		{[]byte{0xc3}, false, "f: ret"},
	}, nil)
	withJump := append([]line{
		{[]byte{0x85, 0xc9}, false, "test ecx, ecx"},
		{[]byte{0x75, 0x10}, false, "jne the indirect jump"},
	}, diamond(readRDI8, readRDI8, readRDI8, false)...)
	flowCase(t, "an indirect jump in the function", append(withJump, line{[]byte{0xff, 0xe0}, false, "jmp rax"}), nil)
}

// TestRedundantWithinIteration: a loop's back edge carries nothing, so
// its first check is made in every iteration, but within an iteration a
// check stands for the repeats every path of the iteration makes.
func TestRedundantWithinIteration(t *testing.T) {
	flowCase(t, "loop", []line{
		{[]byte{0x8b, 0x47, 0x08}, false, "mov eax, [rdi+8]"},
		{[]byte{0x8b, 0x4f, 0x08}, false, "loop: mov ecx, [rdi+8]: the back edge carries nothing"},
		{[]byte{0xff, 0xce}, false, "dec esi"},
		{[]byte{0x75, 0xf9}, false, "jne loop"},
		{[]byte{0xc3}, false, "ret"},
	}, nil)
	flowCase(t, "an if inside the loop", []line{
		{[]byte{0x90}, false, "nop"},
		{[]byte{0x8b, 0x47, 0x08}, false, "loop: mov eax, [rdi+8]"},
		{[]byte{0x85, 0xc0}, false, "test eax, eax"},
		{[]byte{0x74, 0x02}, false, "je join"},
		{[]byte{0xff, 0xc1}, false, "inc ecx"},
		{[]byte{0x8b, 0x57, 0x08}, true, "join: mov edx, [rdi+8]: both ways from the iteration's check"},
		{[]byte{0xff, 0xce}, false, "dec esi"},
		{[]byte{0x75, 0xf0}, false, "jne loop"},
		{[]byte{0xc3}, false, "ret"},
	}, nil)
}

// TestRedundantAfterStore: a plain store may release (a spinlock's
// unlock): checks of other locations before it stand for nothing after
// it; a store to the same location keeps them.
func TestRedundantAfterStore(t *testing.T) {
	flowCase(t, "stores", []line{
		{[]byte{0xc7, 0x46, 0x08, 0x05, 0x00, 0x00, 0x00}, false, "mov dword [rsi+8], 5"},
		{[]byte{0xc7, 0x46, 0x08, 0x06, 0x00, 0x00, 0x00}, true, "mov dword [rsi+8], 6: again"},
		{[]byte{0xc7, 0x07, 0x00, 0x00, 0x00, 0x00}, false, "mov dword [rdi], 0: an unlock, maybe"},
		{[]byte{0x8b, 0x46, 0x08}, false, "mov eax, [rsi+8]: after it"},
		{[]byte{0x8b, 0x0f}, true, "mov ecx, [rdi]: the stored word itself"},
		{[]byte{0xc3}, false, "ret"},
	}, nil)
}

// TestRedundantRegisterWrites: mulx writes its second operand too.
func TestRedundantRegisterWrites(t *testing.T) {
	flowCase(t, "mulx", []line{
		{[]byte{0x8b, 0x4e, 0x08}, false, "mov ecx, [rsi+8]"},
		{[]byte{0x8b, 0x56, 0x08}, true, "mov edx, [rsi+8]"},
		{[]byte{0xc4, 0xe2, 0xcb, 0xf6, 0xc3}, false, "mulx rax, rsi, rbx"},
		{[]byte{0x8b, 0x46, 0x08}, false, "mov eax, [rsi+8]: rsi changed"},
		{[]byte{0xc3}, false, "ret"},
	}, nil)
}

// TestRedundantUnknownWaysIn: without a function the graph knows (no
// symbols, no unwind information), or after an instruction the decoder
// does not know (which may fall through), a block inherits nothing.
func TestRedundantUnknownWaysIn(t *testing.T) {
	lines := diamond(readRDI8, readRDI8, readRDI8, false)
	var code []byte
	at := map[uint64]int{}
	for i, l := range lines {
		at[0x1000+uint64(len(code))] = i
		code = append(code, l.code...)
	}
	c := cfg.Code{Name: ".text", Addr: 0x1000, Insts: disasm.Section(code, 0x1000, nil), Instrument: true}
	g := cfg.Build(cfg.Input{Sections: []cfg.Code{c}, Entries: []uint64{0x1000}})
	in := Input{Graph: g, Decode: func(a uint64) (x86asm.Inst, bool) {
		x, err := disasm.Full(code[a-0x1000:])
		return x, err == nil
	}}
	for a := range Redundant(in) {
		t.Errorf("no function: %s redundant", lines[at[a]].what)
	}
	flowCase(t, "an undecodable instruction on one arm", []line{
		{[]byte{0x85, 0xc9}, false, "test ecx, ecx"},
		{[]byte{0x74, 0x05}, false, "je other"},
		{[]byte{0x8b, 0x47, 0x08}, false, "mov eax, [rdi+8]"},
		{[]byte{0xeb, 0x05}, false, "jmp join"},
		{[]byte{0x66, 0x0f, 0x38, 0xcf, 0xc1}, false, "other: gf2p8mulb xmm0, xmm1 (undecodable here)"},
		{[]byte{0x8b, 0x4f, 0x08}, false, "join: mov ecx, [rdi+8]"},
		{[]byte{0xc3}, false, "ret"},
	}, nil)
}
