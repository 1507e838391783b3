package elide

import "testing"

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

// diamond is an if/else whose two arms read [rdi+8] (the else arm's
// operand is other when other is true), joined by a block that reads it
// again.
func diamond(other, joinRedundant bool) []line {
	elseOp := []byte{0x8b, 0x57, 0x08} // mov edx, [rdi+8]
	if other {
		elseOp = []byte{0x8b, 0x57, 0x10} // mov edx, [rdi+16]
	}
	return []line{
		{[]byte{0x85, 0xc0}, false, "test eax, eax"},
		{[]byte{0x74, 0x05}, false, "je else"},
		{[]byte{0x8b, 0x4f, 0x08}, false, "then: mov ecx, [rdi+8]"},
		{[]byte{0xeb, 0x03}, false, "jmp join"},
		{elseOp, false, "else: mov edx, [rdi+8 or 16]"},
		{[]byte{0x8b, 0x47, 0x08}, joinRedundant, "join: mov eax, [rdi+8]"},
		{[]byte{0xc3}, false, "ret"},
	}
}

// TestRedundantAcrossBlocks: a check made on every path into a block
// stands for the block's repeat of it; one made on only some paths, or
// before a call, a loop-exit hook or a block the patcher failed on, does
// not. A loop's iteration passes on what its back edge carries.
func TestRedundantAcrossBlocks(t *testing.T) {
	flowCase(t, "both arms", diamond(false, true), nil)
	flowCase(t, "one arm", diamond(true, false), nil)
	flowCase(t, "exit hook on the then arm", diamond(false, false), func(in *Input, addr func(int) uint64) {
		then := addr(2)
		in.ExitHooked = func(blk uint64) bool { return blk == then }
	})
	flowCase(t, "else arm not patched", diamond(false, false), func(in *Input, addr func(int) uint64) {
		els := addr(4)
		in.Unchecked = func(blk uint64) bool { return blk == els }
	})
	flowCase(t, "loop, address unchanged", []line{
		{[]byte{0x8b, 0x47, 0x08}, false, "mov eax, [rdi+8]"},
		{[]byte{0x8b, 0x4f, 0x08}, true, "loop: mov ecx, [rdi+8]"},
		{[]byte{0xff, 0xce}, false, "dec esi"},
		{[]byte{0x75, 0xf9}, false, "jne loop"},
		{[]byte{0xc3}, false, "ret"},
	}, nil)
	flowCase(t, "loop, address moves", []line{
		{[]byte{0x8b, 0x47, 0x08}, false, "mov eax, [rdi+8]"},
		{[]byte{0x8b, 0x4f, 0x08}, false, "loop: mov ecx, [rdi+8]"},
		{[]byte{0x48, 0x83, 0xc7, 0x04}, false, "add rdi, 4"},
		{[]byte{0xff, 0xce}, false, "dec esi"},
		{[]byte{0x75, 0xf5}, false, "jne loop"},
		{[]byte{0xc3}, false, "ret"},
	}, nil)
	flowCase(t, "loop, a write in the body", []line{
		{[]byte{0x8b, 0x47, 0x08}, false, "mov eax, [rdi+8]"},
		{[]byte{0x89, 0x4f, 0x08}, false, "loop: mov [rdi+8], ecx: a write after a read"},
		{[]byte{0x8b, 0x57, 0x08}, true, "mov edx, [rdi+8]: a read after the write"},
		{[]byte{0xff, 0xce}, false, "dec esi"},
		{[]byte{0x75, 0xf6}, false, "jne loop"},
		{[]byte{0xc3}, false, "ret"},
	}, nil)
	flowCase(t, "a call between", []line{
		{[]byte{0x8b, 0x43, 0x08}, false, "mov eax, [rbx+8]"},
		{[]byte{0xe8, 0x03, 0x00, 0x00, 0x00}, false, "call f"},
		{[]byte{0x8b, 0x4b, 0x08}, false, "mov ecx, [rbx+8]: after the call (rbx is callee-saved)"},
		{[]byte{0xc3}, false, "f: ret"},
	}, nil)
}
