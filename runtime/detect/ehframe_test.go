package detect

import (
	"debug/elf"
	"os/exec"
	"path/filepath"
	"testing"
)

// A stripped program's functions are still found by the unwind
// information's table: each function's start, and the function an
// address inside it belongs to.
func TestFunctionStartsStripped(t *testing.T) {
	exe := buildProgram(t, symbolsProgram)
	syms := elfSymbols(t, exe)
	stripped := filepath.Join(t.TempDir(), "stripped")
	if out, err := exec.Command("strip", "--strip-all", "-o", stripped, exe).CombinedOutput(); err != nil {
		t.Skipf("strip: %v\n%s", err, out)
	}
	f, err := elf.Open(stripped)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Section(".symtab") != nil {
		t.Fatal("not stripped")
	}
	starts := functionStarts(f)
	for _, fn := range []string{"bump", "main"} {
		if got, ok := startOf(starts, syms[fn]+3); !ok || got != syms[fn] {
			t.Errorf("startOf(%s+3) = %#x, %v; want %#x", fn, got, ok, syms[fn])
		}
	}
	var s symbolizer
	s.init(stripped, &fakeHost{}, 0, 0)
	if got, ok := s.function(syms["bump"] + 3); !ok || got != syms["bump"] {
		t.Errorf("function(bump+3) on the stripped program = %#x, %v; want %#x", got, ok, syms["bump"])
	}
}
