package patch

import (
	"encoding/binary"
	"testing"

	"hgrewrite/abi"
	"hgrewrite/cfg"
	"hgrewrite/disasm"

	"golang.org/x/arch/x86/x86asm"
)

const (
	textAddr   = 0x100000
	slotAccess = 0x200020
	slotRange  = 0x200028
	slotBatch  = 0x200030
)

type fixture struct {
	code []byte
	addr uint64
	g    *cfg.Graph
	res  *Result
}

func build(t *testing.T, pie bool, addr uint64, code []byte, funcSize uint64, opt Options) *fixture {
	t.Helper()
	c := cfg.Code{Name: ".text", Addr: addr, Insts: disasm.Section(code, addr, nil), Instrument: true}
	g := cfg.Build(cfg.Input{Sections: []cfg.Code{c}, Funcs: []cfg.FuncHint{{Name: "f", Addr: addr, Size: funcSize}}, PIE: pie})
	read := func(a, n uint64) []byte {
		if a < addr || a+n > addr+uint64(len(code)) {
			return nil
		}
		return code[a-addr : a-addr+n]
	}
	res, err := Rewrite(g, read, Layout{TextAddr: textAddr, SlotAccess: slotAccess, SlotRange: slotRange, SlotBatch: slotBatch, PIE: pie}, opt)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{code, addr, g, res}
}

// trampoline decodes the trampoline code reached from the patch at from.
func (f *fixture) trampoline(t *testing.T, from uint64) []x86asm.Inst {
	t.Helper()
	var p *Patch
	for i := range f.res.Patches {
		if f.res.Patches[i].Addr == from {
			p = &f.res.Patches[i]
		}
	}
	if p == nil || p.Bytes[0] != 0xe9 {
		t.Fatalf("no jmp32 patch at %#x: %+v", from, f.res.Patches)
	}
	for _, b := range p.Bytes[5:] {
		if b != 0xcc {
			t.Errorf("rest of the block not filled with int3: % x", p.Bytes)
		}
	}
	to := uint64(int64(from+5) + int64(int32(binary.LittleEndian.Uint32(p.Bytes[1:]))))
	var out []x86asm.Inst
	for off := to - textAddr; off < uint64(len(f.res.Text)); {
		in, err := x86asm.Decode(f.res.Text[off:], 64)
		if err != nil {
			t.Fatalf("trampoline does not decode at %#x: %v", textAddr+off, err)
		}
		in.PCRelOff = int(textAddr + off) // remember the address
		out = append(out, in)
		off += uint64(in.Len)
		if in.Op == x86asm.RET || in.Op == x86asm.JMP && target(in) < textAddr {
			break // back to original code
		}
	}
	return out
}

// target returns the absolute target of a relative branch or RIP operand.
func target(in x86asm.Inst) uint64 {
	next := uint64(in.PCRelOff + in.Len)
	for _, a := range in.Args {
		switch a := a.(type) {
		case x86asm.Rel:
			return uint64(int64(next) + int64(a))
		case x86asm.Mem:
			if a.Base == x86asm.RIP {
				return uint64(int64(next) + int64(int32(a.Disp)))
			}
		}
	}
	return 0
}

func TestRelocatedBlock(t *testing.T) {
	// f: mov (%rdi),%eax; add 0x10(%rip),%eax; jne +0; call f; ...
	code := []byte{
		0x8b, 0x07, // 1000 mov (%rdi),%eax
		0x03, 0x05, 0x10, 0x00, 0x00, 0x00, // 1002 add 0x10(%rip),%eax -> 0x1018
		0x75, 0x05, // 1008 jne 100f
		0xe8, 0xf1, 0xff, 0xff, 0xff, // 100a call 1000
		0xc3, // 100f ret
	}
	for _, pie := range []bool{false, true} {
		f := build(t, pie, 0x1000, code, uint64(len(code)), Options{})
		if f.res.Stats.Instrumented != 2 || f.res.Stats.Tactics["jmp32"] != 1 {
			t.Fatalf("stats: %+v", f.res.Stats)
		}
		tr := f.trampoline(t, 0x1000)
		var calls, accessArgs int
		var sawAdd, sawJne bool
		for _, in := range tr {
			switch {
			case in.Op == x86asm.CALL && target(in) == slotAccess:
				calls++
			case in.Op == x86asm.MOV && in.Args[0] == x86asm.RSI:
				info := uint64(in.Args[1].(x86asm.Imm))
				if uint32(info) != 0x1000 && uint32(info) != 0x1002 || info>>32&0xffff != 4 || info>>48 != abi.Read {
					t.Errorf("info word %#x", info)
				}
				accessArgs++
			case in.Op == x86asm.LEA && in.Args[0] == x86asm.RDI:
				if m := in.Args[1].(x86asm.Mem); m.Base == x86asm.RIP && target(in) != 0x1018 {
					t.Errorf("lea of the RIP operand points at %#x, want 0x1018", target(in))
				}
			case in.Op == x86asm.ADD && in.Args[0] == x86asm.EAX:
				sawAdd = target(in) == 0x1018
			case in.Op == x86asm.JNE:
				sawJne = target(in) == 0x100f
			}
		}
		if calls != 2 || accessArgs != 2 || !sawAdd || !sawJne {
			t.Errorf("pie=%v: %d runtime calls, %d info words, add relocated %v, jne relocated %v", pie, calls, accessArgs, sawAdd, sawJne)
		}
		// The trampoline ends in a jump back to the fall-through (the call
		// is the next block's, since calls end blocks).
		if last := tr[len(tr)-1]; last.Op != x86asm.JMP || target(last) != 0x100a {
			t.Errorf("pie=%v: trampoline ends with %v to %#x, want jmp 0x100a", pie, last.Op, target(last))
		}
	}
}

func TestRelocatedCallPushesOriginalReturn(t *testing.T) {
	code := []byte{
		0x48, 0x8b, 0x07, // 1000 mov (%rdi),%rax
		0xe8, 0xf8, 0xff, 0xff, 0xff, // 1003 call 1000
		0xc3, // 1008 ret
	}
	f := build(t, false, 0x1000, code, uint64(len(code)), Options{})
	tr := f.trampoline(t, 0x1000)
	n := len(tr)
	if tr[n-2].Op != x86asm.PUSH || uint64(tr[n-2].Args[0].(x86asm.Imm)) != 0x1008 || tr[n-1].Op != x86asm.JMP || target(tr[n-1]) != 0x1000 {
		t.Errorf("non-PIE call relocation: %v / %v", tr[n-2], tr[n-1])
	}
	f = build(t, true, 0x1000, code, uint64(len(code)), Options{})
	tr = f.trampoline(t, 0x1000)
	found := false
	for _, in := range tr {
		if in.Op == x86asm.LEA && in.Args[0] == x86asm.RAX && target(in) == 0x1008 {
			found = true
		}
	}
	if !found || tr[len(tr)-1].Op != x86asm.JMP || target(tr[len(tr)-1]) != 0x1000 {
		t.Errorf("PIE call relocation does not push 0x1008 and jump to 0x1000: %v", tr)
	}
}

// A call that ends a relocated block stays where it is when the jump to
// the trampoline fits before it: the trampoline jumps back to it, and its
// bytes are left alone, so that its return is the one the processor saw
// pushed.
func TestCallStaysInPlace(t *testing.T) {
	code := []byte{
		0x48, 0x8b, 0x87, 0x00, 0x01, 0x00, 0x00, // 1000 mov 0x100(%rdi),%rax
		0xe8, 0xf4, 0xff, 0xff, 0xff, // 1007 call 1000
		0xc3, // 100c ret
	}
	f := build(t, false, 0x1000, code, uint64(len(code)), Options{})
	tr := f.trampoline(t, 0x1000)
	if last := tr[len(tr)-1]; last.Op != x86asm.JMP || target(last) != 0x1007 {
		t.Errorf("trampoline ends with %v, want a jump back to the call at 0x1007", last)
	}
	for _, p := range f.res.Patches {
		if p.Addr < 0x100c && p.Addr+uint64(len(p.Bytes)) > 0x1007 {
			t.Errorf("patch at %#x (% x) covers the call", p.Addr, p.Bytes)
		}
	}
	if f.res.Stats.CallsKept != 1 || f.res.Stats.Instrumented != 1 {
		t.Errorf("stats: %+v", f.res.Stats)
	}
}

// A block whose bytes before its call are too few for a 5-byte jump
// reaches its trampoline through an island, the call staying in place;
// without an island in reach, the call is relocated with the block
// (TestRelocatedCallPushesOriginalReturn).
func TestCallStaysBehindIsland(t *testing.T) {
	code := []byte{
		0x48, 0x8b, 0x87, 0x00, 0x01, 0x00, 0x00, // 1000 mov 0x100(%rdi),%rax: jmp32, its tail free
		0x48, 0x85, 0xc0, // 1007 test %rax,%rax
		0x74, 0x08, // 100a je 1014
		0x48, 0x8b, 0x07, // 100c mov (%rdi),%rax
		0xe8, 0xec, 0xff, 0xff, 0xff, // 100f call 1000
		0xc3, // 1014 ret
	}
	f := build(t, false, 0x1000, code, uint64(len(code)), Options{})
	var jmp8 *Patch
	for i := range f.res.Patches {
		p := &f.res.Patches[i]
		if p.Addr == 0x100c {
			jmp8 = p
		}
		if p.Addr < 0x1014 && p.Addr+uint64(len(p.Bytes)) > 0x100f {
			t.Errorf("patch at %#x (% x) covers the call", p.Addr, p.Bytes)
		}
	}
	if jmp8 == nil || jmp8.Bytes[0] != 0xeb || len(jmp8.Bytes) != 3 {
		t.Fatalf("block at 0x100c: patch %+v, want a jmp8 over its 3 bytes", jmp8)
	}
	if f.res.Stats.CallsKept != 1 || f.res.Stats.Tactics[string(TacticJmp8Island)] != 1 {
		t.Errorf("stats: %+v", f.res.Stats)
	}
}

func TestLoopAndStackSkip(t *testing.T) {
	code := []byte{
		0x48, 0x8b, 0x04, 0x24, // 1000 mov (%rsp),%rax: stack, skipped
		0x48, 0x03, 0x06, // 1004 add (%rsi),%rax
		0xe2, 0xf7, // 1007 loop 1000
		0xc3, // 1009 ret
	}
	f := build(t, true, 0x1000, code, uint64(len(code)), Options{})
	if f.res.Stats.Skipped[skipStack] != 1 || f.res.Stats.Instrumented != 1 {
		t.Fatalf("stats: %+v", f.res.Stats)
	}
	tr := f.trampoline(t, 0x1000)
	var sawLoop bool
	for i, in := range tr {
		if in.Op == x86asm.LOOP {
			// loop +2; jmp +5; jmp 0x1000
			sawLoop = target(in) == uint64(tr[i+2].PCRelOff) && tr[i+1].Op == x86asm.JMP && target(tr[i+2]) == 0x1000
		}
	}
	if !sawLoop {
		t.Errorf("loop not relocated as loop/jmp/jmp: %v", tr)
	}
	f = build(t, true, 0x1000, code, uint64(len(code)), Options{InstrumentStack: true})
	if f.res.Stats.Instrumented != 2 {
		t.Errorf("--instrument-stack: %+v", f.res.Stats)
	}
	pushf := false
	for _, in := range f.trampoline(t, 0x1000) {
		switch {
		case in.Op == x86asm.PUSHFQ:
			pushf = true
		case in.Op == x86asm.LEA && in.Args[0] == x86asm.RDI:
			want := int64(savedBytes)
			if !pushf {
				want -= 8 // flags not saved: the next instruction (add) overwrites them
			}
			if m := in.Args[1].(x86asm.Mem); m.Base == x86asm.RSP && m.Disp != want {
				t.Errorf("rsp-based address not corrected for the saved registers: %v (want disp %#x)", in, want)
			}
		}
	}
}

func TestShortBlockIsland(t *testing.T) {
	code := []byte{
		0xeb, 0x02, // 1000 jmp 1004
		0x8b, 0x07, // 1002 mov (%rdi),%eax: a 2-byte block (target of the jns)
		0xff, 0xce, // 1004 dec %esi
		0x79, 0xfa, // 1006 jns 1002
		0xc3,                         // 1008 ret
		0x0f, 0x1f, 0x80, 0, 0, 0, 0, // 1009 nopl: padding for the island
	}
	f := build(t, true, 0x1000, code, 9, Options{})
	if f.res.Stats.Tactics["jmp8+island"] != 1 || f.res.Stats.Instrumented != 1 {
		t.Fatalf("stats: %+v", f.res.Stats)
	}
	var jmp8, island *Patch
	for i := range f.res.Patches {
		switch p := &f.res.Patches[i]; p.Addr {
		case 0x1002:
			jmp8 = p
		case 0x1009:
			island = p
		}
	}
	if jmp8 == nil || island == nil || jmp8.Bytes[0] != 0xeb || 0x1004+uint64(int8(jmp8.Bytes[1])) != 0x1009 || island.Bytes[0] != 0xe9 {
		t.Fatalf("patches: %+v", f.res.Patches)
	}
}

func TestFlagsDead(t *testing.T) {
	dec := func(b ...byte) []disasm.Inst { return disasm.Section(b, 0x1000, nil) }
	cases := []struct {
		code []byte
		dead bool
	}{
		{[]byte{0x8b, 0x07, 0x83, 0xc0, 0x01}, true},                   // mov (%rdi),%eax; add $1,%eax
		{[]byte{0x8b, 0x07, 0x74, 0x00}, false},                        // mov (%rdi),%eax; je: reads them
		{[]byte{0x8b, 0x07}, false},                                    // block ends: the next may read them
		{[]byte{0x8b, 0x07, 0xff, 0xc0, 0x83, 0xc0, 0x01}, true},       // inc keeps CF, reads none; add overwrites them all
		{[]byte{0x8b, 0x07, 0xff, 0xc0, 0x72, 0x00}, false},            // inc keeps CF, which jc reads
		{[]byte{0x8b, 0x07, 0xff, 0xc0}, false},                        // inc; block ends: CF may be read next
		{[]byte{0x8b, 0x07, 0x11, 0xc0}, false},                        // adc %eax,%eax reads CF
		{[]byte{0x8b, 0x07, 0x0f, 0x44, 0xc1, 0x01, 0xc0}, false},      // cmove reads ZF
		{[]byte{0x8b, 0x07, 0x0f, 0x94, 0xc0}, false},                  // sete reads ZF
		{[]byte{0x8b, 0x07, 0xd3, 0xe0, 0x83, 0xc0, 0x01}, true},       // shl %cl leaves or sets them, reads none; add
		{[]byte{0x8b, 0x07, 0xd1, 0xd0, 0x83, 0xc0, 0x01}, false},      // rcl $1,%eax reads CF
		{[]byte{0xf3, 0x0f, 0x5a, 0x07, 0x66, 0x0f, 0x2f, 0xd8}, true}, // cvtss2sd (%rdi),%xmm0; comisd %xmm0,%xmm3 (zopfli)
		{[]byte{0xf3, 0x0f, 0x5a, 0x07, 0x77, 0x00}, false},            // cvtss2sd (%rdi),%xmm0; ja reads them
		{[]byte{0x0f, 0x28, 0x07, 0x0f, 0x2e, 0xc1}, true},             // movaps (%rdi),%xmm0; ucomiss %xmm1,%xmm0
		{[]byte{0x8b, 0x07, 0xf3, 0xa6, 0x83, 0xc0, 0x01}, true},       // repe cmpsb may run 0 times, reads none; add
		{[]byte{0x8b, 0x07, 0xf3, 0xa6}, false},                        // repe cmpsb; block ends
		{[]byte{0x8b, 0x07, 0xdd, 0x07, 0x9c}, false},                  // fldl (%rdi) leaves them; pushf reads them
		{[]byte{0x01, 0x07}, true},                                     // add %eax,(%rdi) itself overwrites them
		{[]byte{0x8b, 0x07, 0xe8, 0x00, 0x00, 0x00, 0x00}, true},       // mov (%rdi),%eax; call: the ABI keeps none
		{[]byte{0x8b, 0x07, 0xff, 0xd0}, true},                         // mov (%rdi),%eax; call *%rax
		{[]byte{0x8b, 0x07, 0xc3}, false},                              // mov (%rdi),%eax; ret: a hand-written caller may read them
		{[]byte{0x8b, 0x07, 0x0f, 0xaf, 0xc0}, true},                   // mov (%rdi),%eax; imul %eax,%eax: the rest undefined
		{[]byte{0x8b, 0x07, 0xc1, 0xe0, 0x03}, true},                   // mov (%rdi),%eax; shl $3,%eax
		{[]byte{0x8b, 0x07, 0xd3, 0xe0}, false},                        // mov (%rdi),%eax; shl %cl,%eax: %cl may be 0
		{[]byte{0x8b, 0x07, 0xc1, 0xe0, 0x00}, false},                  // mov (%rdi),%eax; shl $0,%eax leaves them
	}
	for _, c := range cases {
		if got := flagsDead(dec(c.code...)); got != c.dead {
			t.Errorf("flagsDead(% x) = %v, want %v", c.code, got, c.dead)
		}
	}
}

// Past the end of its block, the flags' fate is where the block goes:
// through its direct jump, or falling through.
func TestFlagsDeadAcrossBlocks(t *testing.T) {
	for _, c := range []struct {
		then  []byte
		saved bool
	}{
		{[]byte{0x83, 0xc0, 0x01}, false}, // add $1,%eax: overwritten
		{[]byte{0x74, 0x00}, true},        // je: read
		{[]byte{0xc3}, true},              // ret: a hand-written caller may read them
	} {
		code := append([]byte{
			0x8b, 0x87, 0x00, 0x01, 0x00, 0x00, // mov 0x100(%rdi),%eax
			0xeb, 0x01, // jmp over the nop
			0x90,
		}, c.then...)
		code = append(code, 0xc3)
		f := build(t, false, 0x1000, code, uint64(len(code)), Options{})
		saved := false
		for _, in := range f.trampoline(t, 0x1000) {
			saved = saved || in.Op == x86asm.PUSHFQ
		}
		if saved != c.saved {
			t.Errorf("then % x: flags saved %v, want %v", c.then, saved, c.saved)
		}
	}
}

// A RIP-relative read of read-only data is not instrumented; a write
// there (a program that made it writable) and a read elsewhere are.
func TestReadOnlySkip(t *testing.T) {
	code := []byte{
		0x48, 0x8b, 0x05, 0xf9, 0x0f, 0x00, 0x00, // 1000 mov 0x2000(%rip),%rax: read-only, skipped
		0x48, 0x89, 0x05, 0xf2, 0x0f, 0x00, 0x00, // 1007 mov %rax,0x2000(%rip): a write, instrumented
		0x48, 0x8b, 0x05, 0xeb, 0x1f, 0x00, 0x00, // 100e mov 0x3000(%rip),%rax: writable data, instrumented
		0xc3, // 1015 ret
	}
	f := build(t, true, 0x1000, code, uint64(len(code)), Options{ReadOnly: []Range{{0x2000, 0x3000}}})
	if f.res.Stats.Skipped[skipReadOnly] != 1 || f.res.Stats.Instrumented != 2 {
		t.Fatalf("stats: %+v", f.res.Stats)
	}
}

// An access listed as redundant (package elide) is not instrumented, and
// counts under its own reason; one that is also a stack access counts as
// a stack access.
func TestRedundantSkip(t *testing.T) {
	code := []byte{
		0x8b, 0x47, 0x08, // 1000 mov 0x8(%rdi),%eax: instrumented
		0x8b, 0x4f, 0x08, // 1003 mov 0x8(%rdi),%ecx: redundant
		0x8b, 0x04, 0x24, // 1006 mov (%rsp),%eax: stack
		0xc3, // 1009 ret
	}
	f := build(t, true, 0x1000, code, uint64(len(code)), Options{Redundant: map[uint64]bool{0x1003: true, 0x1006: true}})
	s := f.res.Stats
	if s.Skipped[skipRedundant] != 1 || s.Skipped[skipStack] != 1 || s.Instrumented != 1 {
		t.Fatalf("stats: %+v", s)
	}
}

// TestBatchGlue checks the one call a batch makes: each member's address
// and info word go into a pair on the stack, in order; a member addressed
// through rsi after the first takes rsi's saved value back before its lea
// (the previous info word overwrote it); the call passes the pairs and
// their number; the stack is where it was after the glue; a member that
// is not instrumented is left out.
func TestBatchGlue(t *testing.T) {
	code := []byte{
		0x8b, 0x47, 0x08, // 1000 mov 0x8(%rdi),%eax
		0x89, 0x56, 0x10, // 1003 mov %edx,0x10(%rsi)
		0x8b, 0x04, 0x24, // 1006 mov (%rsp),%eax: stack, not instrumented
		0x8b, 0x4e, 0x04, // 1009 mov 0x4(%rsi),%ecx
		0xc3, // 100c ret
	}
	batches := map[uint64]int{0x1000: 0, 0x1003: 0, 0x1006: 0, 0x1009: 0}
	f := build(t, true, 0x1000, code, uint64(len(code)), Options{Batches: batches})
	if f.res.Stats.Batched != 2 || f.res.Stats.Instrumented != 3 {
		t.Fatalf("stats: %+v", f.res.Stats)
	}
	tr := f.trampoline(t, 0x1000)
	var calls, restores int
	var pcs []uint32
	rsp := int64(0)
	var beforeCall int64
	for _, in := range tr {
		switch {
		case in.Op == x86asm.CALL:
			if target(in) != slotBatch {
				t.Errorf("call to %#x, want the batch slot", target(in))
			}
			calls++
			beforeCall = rsp
		case in.Op == x86asm.LEA && in.Args[0] == x86asm.RSP:
			rsp += in.Args[1].(x86asm.Mem).Disp
		case in.Op == x86asm.PUSH:
			rsp -= 8
		case in.Op == x86asm.POP:
			rsp += 8
		case in.Op == x86asm.MOV && in.Args[0] == x86asm.RSI && len(in.Args) > 1:
			switch a := in.Args[1].(type) {
			case x86asm.Imm:
				pcs = append(pcs, uint32(a))
			case x86asm.Mem:
				if a.Base == x86asm.RSP && a.Disp == 3*16 {
					restores++
				}
			}
		case in.Op == x86asm.MOV && in.Args[0] == x86asm.ESI:
			if n, ok := in.Args[1].(x86asm.Imm); !ok || n != 3 {
				t.Errorf("pair count %v, want 3", in.Args[1])
			}
		}
	}
	if calls != 1 || restores != 2 || rsp != 0 || beforeCall != -128-16-3*16 {
		t.Errorf("%d calls, %d restores of rsi, rsp %+d after, %+d at the call", calls, restores, rsp, beforeCall)
	}
	if len(pcs) != 3 || pcs[0] != 0x1000 || pcs[1] != 0x1003 || pcs[2] != 0x1009 {
		t.Errorf("info words for %#x, want 0x1000, 0x1003, 0x1009", pcs)
	}
}
