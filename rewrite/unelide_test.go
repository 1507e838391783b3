package rewrite

import (
	"testing"

	"golang.org/x/arch/x86/x86asm"

	"hgrewrite/cfg"
	"hgrewrite/disasm"
	"hgrewrite/elfrw"
	"hgrewrite/elide"
	"hgrewrite/patch"
)

// TestPatchUnelided: an if/else whose two arms read [rdi+8] makes the
// join's read of it redundant; when the patcher fails on the then arm's
// block, the join's read is checked again, in a second patching.
func TestPatchUnelided(t *testing.T) {
	const base = 0x1000
	code := []byte{
		0x85, 0xc0, // 1000 test eax, eax
		0x74, 0x05, // 1002 je 1009
		0x8b, 0x4f, 0x08, // 1004 mov ecx, [rdi+8]
		0xeb, 0x03, // 1007 jmp 100c
		0x8b, 0x57, 0x08, // 1009 mov edx, [rdi+8]
		0x8b, 0x47, 0x08, // 100c mov eax, [rdi+8]
		0xc3, // 100f ret
	}
	const then, join = 0x1004, 0x100c
	c := cfg.Code{Name: ".text", Addr: base, Insts: disasm.Section(code, base, nil), Instrument: true}
	g := cfg.Build(cfg.Input{Sections: []cfg.Code{c}, Funcs: []cfg.FuncHint{{Name: "f", Addr: base, Size: uint64(len(code))}}})
	ein := elide.Input{Graph: g, Decode: func(a uint64) (x86asm.Inst, bool) {
		x, err := disasm.Full(code[a-base:])
		return x, err == nil
	}}
	opt := patch.Options{Redundant: elide.Redundant(ein)}
	if !opt.Redundant[join] {
		t.Fatalf("the join's read is not redundant to begin with: %v", opt.Redundant)
	}
	var rounds []map[uint64]bool
	repatch := func(o patch.Options) (*patch.Result, error) {
		rounds = append(rounds, o.Redundant)
		return &patch.Result{FailedBlocks: []uint64{then}}, nil // fails the same way again
	}
	if _, err := patchUnelided(ein, opt, &patch.Result{FailedBlocks: []uint64{then}}, repatch); err != nil {
		t.Fatal(err)
	}
	if len(rounds) != 1 || rounds[0][join] {
		t.Errorf("patched again %d times, the join's read redundant then: %v", len(rounds), rounds)
	}
	rounds = nil
	if _, err := patchUnelided(ein, opt, &patch.Result{}, repatch); err != nil || len(rounds) != 0 {
		t.Errorf("nothing failed: patched again %d times (%v)", len(rounds), err)
	}
	// a patcher that fails on one more block each round (the else arm,
	// then other blocks): it is patched again until no check stands for
	// another
	rounds = nil
	more := []uint64{then, 0x1009, 0x1000, 0x1002, 0x100f}
	growing := func(o patch.Options) (*patch.Result, error) {
		rounds = append(rounds, o.Redundant)
		return &patch.Result{FailedBlocks: more[:min(len(rounds)+1, len(more))]}, nil
	}
	if _, err := patchUnelided(ein, opt, &patch.Result{FailedBlocks: more[:1]}, growing); err != nil {
		t.Fatal(err)
	}
	if len(rounds) == 0 || len(rounds[len(rounds)-1]) != 0 {
		t.Errorf("failures that keep growing: %d rounds, the last with %v redundant (want none)", len(rounds), rounds)
	}
}

// TestInRanges: an address is in an FDE's range [Start, End), whichever
// order the FDEs come in.
func TestInRanges(t *testing.T) {
	in := inRanges([]elfrw.FDE{{Start: 0x3000, End: 0x3100}, {Start: 0x1000, End: 0x1010}})
	for a, want := range map[uint64]bool{0xfff: false, 0x1000: true, 0x100f: true, 0x1010: false, 0x2fff: false, 0x3000: true, 0x30ff: true, 0x3100: false} {
		if in(a) != want {
			t.Errorf("%#x: %v, want %v", a, in(a), want)
		}
	}
	if inRanges(nil) != nil {
		t.Error("no ranges: want a nil function")
	}
}
