package detect

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// halt_on_error prints the first report whole, then the summary, and
// halts with the exit code.
func TestHaltOnError(t *testing.T) {
	b := newBench(t, "halt_on_error=1:exitcode=7")
	t1 := b.create(0, 0x500)
	t2 := b.create(0, 0x510)
	b.flush(t1, wr(x, 4, 0x1001))
	b.flush(t2, wr(x, 4, 0x2002))
	if !b.host.halted || b.host.haltErr != 7 {
		t.Fatalf("halted %v with %d, want exit code 7", b.host.halted, b.host.haltErr)
	}
	out := b.host.output()
	if !strings.Contains(out, "Write of size 4 at 0x10000 by thread T2") || !strings.HasSuffix(out, "==================\nSUMMARY: hgrewrite: 1 data race(s) reported in program\n") {
		t.Errorf("no whole report before the halt:\n%s", out)
	}
}

// max_reports bounds the reports printed, not the races counted; the
// summary says so. Reports without a stack are printed at the end.
func TestMaxReports(t *testing.T) {
	b := newBench(t, "max_reports=1")
	t1 := b.create(0, 0x500)
	t2 := b.create(0, 0x510)
	b.flush(t1, wr(x, 4, 0x1001), wr(data, 4, 0x1002))
	if n := b.flush(t2, wr(x, 4, 0x2001), wr(data, 4, 0x2002)); n != 1 {
		t.Errorf("%d reports pending, want 1", n)
	}
	races, out := b.finish()
	wantReports(t, races, out, 2, "SUMMARY: hgrewrite: 2 data race(s) reported in program (1 printed, max_reports=1)\n")
	if strings.Count(out, "WARNING") != 1 || strings.Contains(out, "Stack of") {
		t.Errorf("want one report without a stack:\n%s", out)
	}
}

// verbosity=1 adds the segments that were found unordered.
func TestVerbosity(t *testing.T) {
	b := newBench(t, "verbosity=1")
	t1 := b.create(0, 0x500)
	t2 := b.create(0, 0x510)
	b.flush(t1, wr(x, 4, 0x1001))
	b.flush(t2, wr(x, 4, 0x2001))
	races, out := b.finish()
	wantReports(t, races, out, 1, "  Last ordered segment T1@1; T2 has seen T1 up to 0.\n")
}

// symbolsProgram is compiled by TestSymbols; a global with a C++ mangled
// name is demangled through the Host.
const symbolsProgram = `
int counter[16];
int _ZN2ns5valueE;
int bump(int i) {
	counter[i]++;
	return counter[i];
}
int main(void) { return bump(2) + _ZN2ns5valueE; }
`

// With the program's file, reports name functions, lines and globals from
// its ELF symbols and DWARF line table.
func TestSymbols(t *testing.T) {
	exe := buildProgram(t, symbolsProgram)
	syms := elfSymbols(t, exe)
	b := newBench(t, "")
	b.d.rep.sym.exe = exe
	t1 := b.create(0, syms["main"]+5)
	t2 := b.create(0, 0x510)
	b.flush(t1, wr(syms["counter"]+8, 4, uint32(syms["bump"])))
	b.flush(t2, wr(syms["counter"]+8, 4, uint32(syms["bump"]+4)), wr(syms["_ZN2ns5valueE"], 4, 0x2001))
	b.flush(t1, wr(syms["_ZN2ns5valueE"], 4, 0x1001))
	races, out := b.finish()
	wantReports(t, races, out, 2,
		fmt.Sprintf("    #0 bump prog.c:4 (prog+%#x)\n", syms["bump"]),
		fmt.Sprintf("    #0 bump prog.c:4 (prog+%#x)\n", syms["bump"]+4),
		fmt.Sprintf("  Location is global 'counter' at offset 8 (of size 64) at %#x (prog+%#x)\n", syms["counter"]+8, syms["counter"]+8),
		fmt.Sprintf("  Location is global 'demangled:_ZN2ns5valueE' of size 4 at %#x", syms["_ZN2ns5valueE"]),
		"  Thread T1 created by T0 at:\n    #0 main prog.c:8 (prog+",
		"SUMMARY: hgrewrite: 2 data race(s) reported in prog\n")
}

// buildProgram compiles a C program, position-dependent with debug
// information, or skips the test without a C compiler.
func buildProgram(t *testing.T, src string) string {
	cc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("no gcc")
	}
	dir := t.TempDir()
	c := filepath.Join(dir, "prog.c")
	if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "prog")
	if out, err := exec.Command(cc, "-g", "-O0", "-no-pie", "-o", exe, c).CombinedOutput(); err != nil {
		t.Skipf("gcc: %v\n%s", err, out)
	}
	return exe
}

// symbolTable is a program's .symtab.
func symbolTable(t *testing.T, exe string) []elf.Symbol {
	t.Helper()
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	return syms
}

// elfSymbols maps the names of a program's symbols to their addresses.
func elfSymbols(t *testing.T, exe string) map[string]uint64 {
	m := map[string]uint64{}
	for _, s := range symbolTable(t, exe) {
		m[s.Name] = s.Value
	}
	return m
}
