package cfg

import (
	"encoding/binary"
	"reflect"
	"testing"

	"hgrewrite/disasm"
)

// code decodes hand-assembled bytes at addr into one section.
func code(addr uint64, b ...byte) Code {
	return Code{Name: ".text", Addr: addr, Insts: disasm.Section(b, addr, nil), Instrument: true}
}

type blk struct {
	start, end       uint64
	reached, padding bool
}

func blocks(g *Graph) []blk {
	var out []blk
	for _, b := range g.Blocks {
		out = append(out, blk{b.Start, b.End, b.Reached, b.Padding})
	}
	return out
}

func TestBlocksAndReachability(t *testing.T) {
	c := code(0x1000,
		0x48, 0x8b, 0x07, // 1000 mov (%rdi),%rax
		0x74, 0x05, // 1003 je 100a
		0x48, 0x89, 0x07, // 1005 mov %rax,(%rdi)
		0xeb, 0x01, // 1008 jmp 100b
		0xc3,                         // 100a ret
		0xe8, 0xf0, 0xff, 0xff, 0xff, // 100b call 1000
		0xc3,       // 1010 ret
		0x66, 0x90, // 1011 xchg %ax,%ax (nop): padding
		0xcc,             // 1013 int3
		0x01, 0x02, 0x03, // 1014 data nobody reaches: add %eax,(%rdx); .byte 3
	)
	g := Build(Input{Sections: []Code{c}, Funcs: []FuncHint{{Name: "f", Addr: 0x1000, Size: 0x11}}})
	want := []blk{
		{0x1000, 0x1005, true, false},
		{0x1005, 0x100a, true, false},
		{0x100a, 0x100b, true, false},
		{0x100b, 0x1010, true, false},
		{0x1010, 0x1011, true, false},
		{0x1011, 0x1014, false, true},
		{0x1014, 0x1017, false, false},
	}
	if got := blocks(g); !reflect.DeepEqual(got, want) {
		t.Fatalf("blocks:\n got  %+v\n want %+v", got, want)
	}
	if !g.IsLeader(0x100b) || !g.IsLeader(0x1010) || g.IsLeader(0x1014) {
		t.Errorf("leaders: jump target, return site, unreached data = %v %v %v", g.IsLeader(0x100b), g.IsLeader(0x1010), g.IsLeader(0x1014))
	}
	// Entry: the function's start and the call's target, the return
	// site; not the je's fall-through, nor a jump's target
	for _, e := range []struct {
		addr  uint64
		entry bool
	}{{0x1000, true}, {0x1005, false}, {0x100a, false}, {0x100b, false}, {0x1010, true}} {
		if got := g.Blocks[g.BlockAt(e.addr)].Entry; got != e.entry {
			t.Errorf("block %#x: Entry %v, want %v", e.addr, got, e.entry)
		}
	}
	b := g.Blocks[g.BlockAt(0x1003)]
	if !reflect.DeepEqual(b.Succs, []uint64{0x100a, 0x1005}) {
		t.Errorf("succs of the je block: %x", b.Succs)
	}
	if len(g.Funcs) != 1 || len(g.Funcs[0].Blocks) != 5 || !reflect.DeepEqual(g.Funcs[0].Callees, []uint64{0x1000}) {
		t.Errorf("funcs: %+v", g.Funcs)
	}
	if g.BlockAt(0x2000) != -1 || g.BlockAt(0x1006) != 1 {
		t.Errorf("BlockAt")
	}
}

func TestNoReturnCallEndsReachability(t *testing.T) {
	c := code(0x1000,
		0xe8, 0x0b, 0x00, 0x00, 0x00, // 1000 call 1010 (abort@plt)
		0x00, 0x00, // 1005 zero padding after a noreturn call
		0xe8, 0x04, 0x00, 0x00, 0x00, // 1007 unreached call
		0xc3, 0xcc, 0xcc, 0xcc, // 100c ret, int3 padding
		0xff, 0x25, 0x00, 0x00, 0x00, 0x00, // 1010 jmp *0(%rip) (the stub)
	)
	g := Build(Input{Sections: []Code{c}, Funcs: []FuncHint{{Name: "f", Addr: 0x1000, Size: 0x10}},
		PLT: map[uint64]string{0x1010: "abort"}, Entries: []uint64{0x1010}})
	if g.Blocks[g.BlockAt(0x1005)].Reached {
		t.Errorf("bytes after a call to abort are reached")
	}
	if !g.IsLeader(0x1005) {
		t.Errorf("the return site after a noreturn call must stay a leader")
	}
	if !reflect.DeepEqual(g.Funcs[0].Imports, []string{"abort"}) {
		t.Errorf("imports: %v", g.Funcs[0].Imports)
	}
	if !NoReturn("_ZSt20__throw_length_errorPKc") || NoReturn("printf") {
		t.Errorf("NoReturn")
	}
}

func TestJumpTable(t *testing.T) {
	// lea table(%rip),%rdx at 1000 (table at 0x3000); movslq; add; jmp *%rax;
	// then three cases.
	c := code(0x1000,
		0x48, 0x8d, 0x15, 0xf9, 0x1f, 0x00, 0x00, // 1000 lea 0x1ff9(%rip),%rdx -> 0x3000
		0x48, 0x63, 0x04, 0xba, // 1007 movslq (%rdx,%rdi,4),%rax
		0x48, 0x01, 0xd0, // 100b add %rdx,%rax
		0xff, 0xe0, // 100e jmp *%rax
		0xb8, 0x01, 0x00, 0x00, 0x00, 0xc3, // 1010 mov $1,%eax; ret
		0xb8, 0x02, 0x00, 0x00, 0x00, 0xc3, // 1016 mov $2,%eax; ret
		0x8b, 0x07, 0xc3, // 101c mov (%rdi),%eax; ret
	)
	table := make([]byte, 16)
	for i, target := range []uint64{0x1010, 0x1016, 0x101c} {
		binary.LittleEndian.PutUint32(table[4*i:], uint32(int32(int64(target)-0x3000)))
	}
	binary.LittleEndian.PutUint32(table[12:], 0x7fff0000) // past the end: not code
	data := func(addr, n uint64) []byte {
		if addr < 0x3000 || addr+n > 0x3000+uint64(len(table)) {
			return nil
		}
		return table[addr-0x3000 : addr-0x3000+n]
	}
	g := Build(Input{Sections: []Code{c}, Funcs: []FuncHint{{Name: "sw", Addr: 0x1000, Size: 0x1f}}, Data: data, PIE: true})
	if g.JumpTables != 1 {
		t.Errorf("jump tables: %d", g.JumpTables)
	}
	for _, a := range []uint64{0x1010, 0x1016, 0x101c} {
		bi := g.BlockAt(a)
		if !g.IsLeader(a) || g.Blocks[bi].Start != a || !g.Blocks[bi].Reached {
			t.Errorf("case %#x: leader %v, block %+v", a, g.IsLeader(a), g.Blocks[bi])
		}
	}
}

func TestCodePointersOutsideFunctionsAreNotEntries(t *testing.T) {
	c := code(0x1000,
		0x8b, 0x07, 0xc3, // 1000 f: mov (%rdi),%eax; ret
		0x8b, 0x06, 0xc3, // 1003 table-like bytes outside f, pointed to from data
	)
	g := Build(Input{Sections: []Code{c}, Funcs: []FuncHint{{Name: "f", Addr: 0x1000, Size: 3}}, CodePtrs: []uint64{0x1003}})
	b := g.Blocks[g.BlockAt(0x1003)]
	if !g.IsLeader(0x1003) || b.Start != 0x1003 || b.Reached {
		t.Errorf("code pointer outside any function: leader %v, block %+v", g.IsLeader(0x1003), b)
	}
	g = Build(Input{Sections: []Code{c}, Funcs: []FuncHint{{Name: "f", Addr: 0x1000, Size: 6}}, CodePtrs: []uint64{0x1003}})
	if !g.Blocks[g.BlockAt(0x1003)].Reached {
		t.Errorf("code pointer inside a function is not an entry")
	}
}

func TestFramePointerAndUnwind(t *testing.T) {
	c := code(0x1000,
		0xf3, 0x0f, 0x1e, 0xfa, // 1000 endbr64
		0x55,             // 1004 push %rbp
		0x48, 0x89, 0xe5, // 1005 mov %rsp,%rbp
		0x8b, 0x45, 0xfc, // 1008 mov -4(%rbp),%eax
		0x5d, 0xc3, // 100b pop %rbp; ret
		0x8b, 0x07, 0xc3, // 100d g: mov (%rdi),%eax; ret
	)
	g := Build(Input{Sections: []Code{c},
		Funcs:  []FuncHint{{Name: "f", Addr: 0x1000, Size: 0xd}, {Name: "g", Addr: 0x100d, Size: 3}},
		Unwind: []FuncHint{{Addr: 0x1000, Size: 0xd}}})
	if !g.Funcs[0].FramePointer || g.Funcs[1].FramePointer {
		t.Errorf("frame pointer: f %v, g %v", g.Funcs[0].FramePointer, g.Funcs[1].FramePointer)
	}
	if !g.HasUnwind || !g.Blocks[g.BlockAt(0x1000)].Unwound || g.Blocks[g.BlockAt(0x100d)].Unwound {
		t.Errorf("unwind coverage wrong")
	}
}

func TestSpans(t *testing.T) {
	ss := mergeSpans([]span{{10, 20}, {15, 30}, {40, 50}, {0, 5}})
	if !reflect.DeepEqual(ss, spans{{0, 5}, {10, 30}, {40, 50}}) {
		t.Fatalf("merge: %v", ss)
	}
	for a, want := range map[uint64]bool{0: true, 5: false, 10: true, 29: true, 30: false, 45: true, 50: false} {
		if ss.contains(a) != want {
			t.Errorf("contains(%d) = %v", a, !want)
		}
	}
}
