package detect

import (
	"bufio"
	"debug/elf"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// inlineProgram has two static inline functions, one inlined into the
// other and that into main; the comments mark the lines frames must name.
const inlineProgram = `
volatile int sink;
int shared_counter = 5;
static inline __attribute__((always_inline)) void leaf(int x) {
	sink = x * 3; /* LEAF */
}
static inline __attribute__((always_inline)) void middle(int x) {
	leaf(x + 1); /* MIDDLE */
	sink += 2;
}
int main(int argc, char **argv) {
	(void)argv;
	middle(argc); /* MAIN */
	return shared_counter;
}
`

// markerLine is the 1-based line of src that holds the comment marker.
func markerLine(t *testing.T, src, marker string) int {
	for i, l := range strings.Split(src, "\n") {
		if strings.Contains(l, "/* "+marker+" */") {
			return i + 1
		}
	}
	t.Fatalf("no marker %s", marker)
	return 0
}

// compile builds src as dir/prog.c into dir/name with the given flags, or
// skips the test without gcc.
func compile(t *testing.T, dir, name, src string, flags ...string) string {
	cc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("no gcc")
	}
	c := filepath.Join(dir, "prog.c")
	if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, name)
	args := append(append([]string{}, flags...), "-o", exe, c)
	if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
		t.Skipf("gcc: %v\n%s", err, out)
	}
	return exe
}

// run runs a tool of binutils, or skips the test without it.
func run(t *testing.T, tool string, args ...string) {
	if _, err := exec.LookPath(tool); err != nil {
		t.Skipf("no %s", tool)
	}
	if out, err := exec.Command(tool, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", tool, args, err, out)
	}
}

// funcRange is the address range of a function symbol of exe.
func funcRange(t *testing.T, exe, name string) (lo, hi uint64) {
	for _, s := range symbolTable(t, exe) {
		if s.Name == name {
			return s.Value, s.Value + s.Size
		}
	}
	t.Fatalf("%s has no symbol %s", exe, name)
	return 0, 0
}

type frameWant struct {
	fn      string
	line    int
	inlined bool
}

// checkInlineChain symbolises every address of main in exe (whose
// symbols come from symExe) and wants the addresses whose innermost
// function is leaf to give the chain leaf, middle, main with the marked
// lines; at least one must, and the first is returned.
func checkInlineChain(t *testing.T, s *symbolizer, symExe string) uint64 {
	t.Helper()
	want := []frameWant{
		{"leaf", markerLine(t, inlineProgram, "LEAF"), true},
		{"middle", markerLine(t, inlineProgram, "MIDDLE"), true},
		{"main", markerLine(t, inlineProgram, "MAIN"), false},
	}
	lo, hi := funcRange(t, symExe, "main")
	var found uint64
	for pc := lo; pc < hi; pc++ {
		fr := s.frames(pc)
		if len(fr) == 0 {
			t.Fatalf("no frame at %#x", pc)
		}
		if fr[0].Func != "leaf" {
			continue
		}
		if found == 0 {
			found = pc
		}
		var got []frameWant
		for _, f := range fr {
			got = append(got, frameWant{f.Func, f.Line, f.Inlined})
			if filepath.Base(f.File) != "prog.c" || f.Module != s.name || f.Offset != pc || f.PC != pc+s.bias {
				t.Errorf("%#x: frame %+v: want file prog.c, module %s, offset %#x, pc %#x", pc, f, s.name, pc, pc+s.bias)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%#x: frames %v, want %v", pc, got, want)
		}
	}
	if found == 0 {
		t.Fatalf("no address of main in %s is leaf's code", symExe)
	}
	return found
}

// Inlined functions are reported innermost first, each at its line, the
// functions they are inlined into at the call sites.
func TestFramesInline(t *testing.T) {
	dir := t.TempDir()
	exe := compile(t, dir, "prog", inlineProgram, "-O2", "-g")
	s := &symbolizer{exe: exe, host: &fakeHost{}, bias: 0x1000}
	pc := checkInlineChain(t, s, exe)
	// the outermost frame is the function the code belongs to, printed
	// at the call site
	fr := s.frames(pc)
	want := fmt.Sprintf("main prog.c:%d (prog+%#x)", markerLine(t, inlineProgram, "MAIN"), pc)
	if got := fr[len(fr)-1].text(); got != want {
		t.Errorf("outer frame of %#x = %q, want %q", pc, got, want)
	}
}

// libHelper prints the address of libc's qsort and waits for its input to
// close.
const libHelper = `
#include <stdio.h>
#include <stdlib.h>
int main(void) {
	printf("%p\n", (void *)qsort);
	fflush(stdout);
	while (getchar() != EOF)
		;
	return 0;
}
`

// startHelper runs a C program that prints an address and waits; it
// returns the process and the address.
func startHelper(t *testing.T, src string) (*exec.Cmd, uint64) {
	exe := compile(t, t.TempDir(), "helper", src, "-O1", "-fPIE", "-pie") // a PIE takes qsort's address in libc, not a PLT entry
	cmd := exec.Command(exe)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		in.Close()
		cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	addr, err := strconv.ParseUint(strings.TrimSpace(line), 0, 64)
	if err != nil {
		t.Fatalf("helper printed %q", line)
	}
	return cmd, addr
}

// dynamicSymbol is the value of a dynamic symbol of the ELF file at path.
func dynamicSymbol(t *testing.T, path, name string) uint64 {
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.DynamicSymbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		if s.Name == name && s.Value != 0 {
			return s.Value
		}
	}
	t.Fatalf("%s has no dynamic symbol %s", path, name)
	return 0
}

// A code address in a shared library of another process is named from
// the library's symbols, with the library's base name and link-time
// offset; an address in no mapping gives a bare frame.
func TestLibFrames(t *testing.T) {
	cmd, qsort := startHelper(t, libHelper)
	s := &symbolizer{host: &fakeHost{}, pid: cmd.Process.Pid}
	pc := qsort + 4
	fr := s.libFrames(pc)
	f := fr[len(fr)-1]
	mp, ok := findMapping(readMaps(cmd.Process.Pid), pc)
	if !ok {
		t.Fatalf("%#x is in no mapping of the helper", pc)
	}
	want := dynamicSymbol(t, mp.path, "qsort") + 4
	if f.Func != "qsort" || f.Module != filepath.Base(mp.path) || f.Offset != want || f.PC != pc || f.Inlined {
		t.Errorf("libFrames(%#x) = %+v, want qsort in %s at offset %#x", pc, fr, filepath.Base(mp.path), want)
	}
	if !strings.HasPrefix(f.Module, "libc.so") {
		t.Errorf("qsort is in %s, not libc", f.Module)
	}
	if fr := s.libFrames(0x1000); len(fr) != 1 || fr[0] != (Frame{PC: 0x1000}) {
		t.Errorf("libFrames(0x1000) = %+v, want a bare frame", fr)
	}
}

// splitDebug builds inlineProgram as dir/prog, moves its DWARF and
// symbols into dir/prog.debug and strips them from prog (all of them when
// all is set, the debug sections only otherwise).
func splitDebug(t *testing.T, dir string, all bool) (exe, debug string) {
	exe = compile(t, dir, "prog", inlineProgram, "-O2", "-g", "-Wl,--build-id")
	debug = exe + ".debug"
	run(t, "objcopy", "--only-keep-debug", exe, debug)
	if all {
		run(t, "strip", "--strip-all", exe)
	} else {
		run(t, "strip", "-g", exe)
	}
	return exe, debug
}

// checkStripped wants symbolizer s of a stripped copy of inlineProgram to
// name its code and globals from the separate debug file, and symbolizer
// none, which does not find it, not to.
func checkStripped(t *testing.T, s, none *symbolizer, symExe string) {
	t.Helper()
	checkInlineChain(t, s, symExe)
	lo, _ := funcRange(t, symExe, "shared_counter")
	if name, off, size, ok := s.global(lo + 1); name != "shared_counter" || off != 1 || size != 4 || !ok {
		t.Errorf("global(%#x) = %s+%d of size %d (%v), want shared_counter+1 of size 4", lo+1, name, off, size, ok)
	}
	main, _ := funcRange(t, symExe, "main")
	if fr := none.frames(main); fr[0].Line != 0 || len(fr) != 1 {
		t.Errorf("without the debug file, frames(main) = %+v, want no line", fr)
	}
}

// A stripped program that links to its debug file by .gnu_debuglink
// (with the file's CRC32) is symbolised from that file when it sits
// beside the program, also after the program was copied to another name
// (the rewritten prog.hg keeps the original's sections).
func TestDebugLink(t *testing.T) {
	dir := t.TempDir()
	exe, debug := splitDebug(t, dir, false)
	run(t, "objcopy", "--remove-section=.note.gnu.build-id", "--add-gnu-debuglink="+debug, exe)
	hg := exe + ".hg"
	copyFile(t, exe, hg)
	root := t.TempDir() // no build-id tree
	s := &symbolizer{exe: hg, host: &fakeHost{}, debugRoot: root}
	// The debug file changed after the link was made: its CRC no longer
	// matches.
	other := filepath.Join(t.TempDir(), "prog.hg")
	copyFile(t, exe, other)
	copyFile(t, debug, filepath.Join(filepath.Dir(other), "prog.debug"))
	f, err := os.OpenFile(filepath.Join(filepath.Dir(other), "prog.debug"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte{0})
	f.Close()
	checkStripped(t, s, &symbolizer{exe: other, host: &fakeHost{}, debugRoot: root}, debug)

	// In .debug/ beside the program, and under the debug root plus the
	// program's directory.
	for _, where := range []string{filepath.Join(dir, ".debug"), filepath.Join(root, dir)} {
		if err := os.MkdirAll(where, 0o755); err != nil {
			t.Fatal(err)
		}
		moved := filepath.Join(where, "prog.debug")
		if err := os.Rename(debug, moved); err != nil {
			t.Fatal(err)
		}
		debug = moved
		s := &symbolizer{exe: hg, host: &fakeHost{}, debugRoot: root}
		checkInlineChain(t, s, debug)
	}
}

// A program stripped of all its symbols is symbolised from the debug file
// that the debug root's .build-id tree holds under its build-id.
func TestDebugBuildID(t *testing.T) {
	dir := t.TempDir()
	exe, debug := splitDebug(t, dir, true)
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	id := buildID(f)
	f.Close()
	if len(id) < 2 {
		t.Skip("gcc made no build-id")
	}
	root := t.TempDir()
	h := hex.EncodeToString(id)
	if err := os.MkdirAll(filepath.Join(root, ".build-id", h[:2]), 0o755); err != nil {
		t.Fatal(err)
	}
	copyFile(t, debug, filepath.Join(root, ".build-id", h[:2], h[2:]+".debug"))
	if err := os.Remove(debug); err != nil {
		t.Fatal(err)
	}
	s := &symbolizer{exe: exe, host: &fakeHost{}, debugRoot: root}
	checkStripped(t, s, &symbolizer{exe: exe, host: &fakeHost{}, debugRoot: t.TempDir()},
		filepath.Join(root, ".build-id", h[:2], h[2:]+".debug"))
}

// funcAddrs are the addresses of exe's function symbols, each once.
func funcAddrs(t *testing.T, exe string) []uint64 {
	seen := map[uint64]bool{}
	var out []uint64
	for _, s := range symbolTable(t, exe) {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Value != 0 && !seen[s.Value] {
			seen[s.Value] = true
			out = append(out, s.Value)
		}
	}
	return out
}

func copyFile(t *testing.T, from, to string) {
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o755); err != nil {
		t.Fatal(err)
	}
}

// cxxProgram inlines much of the C++ library into main, some of it
// several levels deep.
const cxxProgram = `
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>
namespace ns {
struct Counts {
	std::map<std::string, int> m;
	void add(const std::string &s) { m[s]++; }
};
}
int main(int argc, char **argv) {
	std::vector<int> v;
	for (int i = 0; i < argc * 1000; i++)
		v.push_back((i * 7919) % 1000);
	std::sort(v.begin(), v.end());
	ns::Counts c;
	for (int i = 0; i < argc; i++)
		c.add(argv[i]);
	std::printf("%d %zu\n", v[0], c.m.size());
	return 0;
}
`

// The inline chains of every address of main in an optimised C++
// program match binutils' addr2line -i: the same inlined functions
// (linkage names) at the same files and lines. And where addr2line
// finds no line at the first address of another function (one from a
// file without line table, such as _start), neither do frames, rather
// than the line before it.
func TestFramesMatchAddr2line(t *testing.T) {
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skip("no g++")
	}
	if _, err := exec.LookPath("addr2line"); err != nil {
		t.Skip("no addr2line")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "prog.cc")
	if err := os.WriteFile(src, []byte(cxxProgram), 0o644); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "prog")
	if out, err := exec.Command("g++", "-O2", "-g", "-o", exe, src).CombinedOutput(); err != nil {
		t.Skipf("g++: %v\n%s", err, out)
	}
	lo, hi := funcRange(t, exe, "main")
	var pcs []uint64
	for pc := lo; pc < hi; pc++ {
		pcs = append(pcs, pc)
	}
	for _, a := range funcAddrs(t, exe) {
		if a < lo || a >= hi {
			pcs = append(pcs, a)
		}
	}
	args := []string{"-f", "-i", "-a", "-e", exe}
	for _, pc := range pcs {
		args = append(args, fmt.Sprintf("%#x", pc))
	}
	out, err := exec.Command("addr2line", args...).Output()
	if err != nil {
		t.Fatal(err)
	}
	want := addr2lineChains(string(out))
	s := &symbolizer{exe: exe, host: &fakeHost{}}
	inlined, noLine := 0, 0
	for _, pc := range pcs {
		var got []string
		fr := s.frames(pc)
		for i, f := range fr {
			name := "" // the ELF symbol's, where addr2line names DWARF's
			if i < len(fr)-1 {
				name = strings.TrimPrefix(f.Func, "demangled:")
				inlined++
			}
			loc := fmt.Sprintf("%s:%d", filepath.Base(f.File), f.Line)
			if f.Line == 0 {
				loc = "-"
			}
			got = append(got, name+" "+loc)
		}
		if pc < lo || pc >= hi {
			if want[pc][0] != " -" {
				continue // addr2line has a line; only main is compared whole
			}
			noLine++
		}
		if strings.Join(got, " | ") != strings.Join(want[pc], " | ") {
			t.Errorf("%#x: frames %q, addr2line %q", pc, got, want[pc])
		}
	}
	if inlined == 0 || noLine == 0 {
		t.Errorf("%d inlined frames, %d addresses without a line: want some of each", inlined, noLine)
	}
}

// addr2lineChains parses the output of addr2line -f -i -a: per address,
// "func file:line" (or "func -" without a line) innermost first,
// without the outermost function's name.
func addr2lineChains(out string) map[uint64][]string {
	chains := map[uint64][]string{}
	var pc uint64
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i := 0; i < len(lines); i++ {
		if strings.HasPrefix(lines[i], "0x") {
			pc, _ = strconv.ParseUint(lines[i], 0, 64)
			continue
		}
		if i+1 >= len(lines) {
			break
		}
		fn, loc := lines[i], lines[i+1]
		i++
		loc, _, _ = strings.Cut(loc, " (discriminator")
		file, line, _ := strings.Cut(loc, ":")
		loc = filepath.Base(file) + ":" + line
		if line == "?" || line == "0" {
			loc = "-"
		}
		chains[pc] = append(chains[pc], fn+" "+loc)
	}
	for pc, c := range chains { // the outermost function is compared by name elsewhere
		_, c[len(c)-1], _ = strings.Cut(c[len(c)-1], " ")
		c[len(c)-1] = " " + c[len(c)-1]
		chains[pc] = c
	}
	return chains
}

// An address past the end of a sequence has no line, up to the next
// sequence; of rows at one address the last one counts.
func TestLineSequenceEnd(t *testing.T) {
	u := &cuInfo{lines: []lineEntry{
		{addr: 0x10, file: "a.c", line: 1},
		{addr: 0x18, file: "a.c", line: 2},
		{addr: 0x18, file: "a.c", line: 3},
		{addr: 0x20, file: "a.c", line: 3, end: true},
		{addr: 0x30, file: "b.c", line: 5},
		{addr: 0x40, file: "b.c", line: 6, end: true},
	}}
	for _, c := range []struct {
		pc   uint64
		want srcLoc
	}{
		{0x0f, srcLoc{}},
		{0x10, srcLoc{"a.c", 1, 0}},
		{0x1f, srcLoc{"a.c", 3, 0}},
		{0x20, srcLoc{}},
		{0x2f, srcLoc{}},
		{0x30, srcLoc{"b.c", 5, 0}},
		{0x40, srcLoc{}},
	} {
		if got := u.line(c.pc); got != c.want {
			t.Errorf("line(%#x) = %+v, want %+v", c.pc, got, c.want)
		}
	}
}

// With pid 0 the symbolizer reads this process's maps: the vDSO is named
// by its mapping's name.
func TestLibFramesSelf(t *testing.T) {
	s := &symbolizer{host: &fakeHost{}}
	found := false
	for _, mp := range readMaps(0) {
		if mp.path == "[vdso]" {
			found = true
			if fr := s.libFrames(mp.lo + 1); len(fr) != 1 || fr[0] != (Frame{PC: mp.lo + 1, Module: "[vdso]"}) {
				t.Errorf("libFrames(vdso) = %+v", fr)
			}
		}
	}
	if !found {
		t.Skip("no vDSO")
	}
}
