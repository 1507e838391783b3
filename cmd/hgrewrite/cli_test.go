package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestHelpAndVersion(t *testing.T) {
	code, _, stderr := hgrewrite(t, "--help")
	if code != 0 || !strings.Contains(stderr, "Usage: hgrewrite") || !strings.Contains(stderr, "--output") ||
		!strings.Contains(stderr, "--stats") || !strings.Contains(stderr, "HG_OPTIONS") ||
		!strings.Contains(stderr, "  log_path ") || !strings.Contains(stderr, "Example: HG_OPTIONS=") {
		t.Errorf("--help: exit %d, output %q", code, stderr)
	}
	code, stdout, _ := hgrewrite(t, "--version")
	if code != 0 || !strings.HasPrefix(stdout, "hgrewrite ") {
		t.Errorf("--version: exit %d, output %q", code, stdout)
	}
	code, _, stderr = hgrewrite(t, "--no-such-flag")
	if code != 2 || !strings.Contains(stderr, "no-such-flag") {
		t.Errorf("unknown flag: exit %d, output %q", code, stderr)
	}
	code, _, stderr = hgrewrite(t, "/bin/true")
	if code != 2 || !strings.Contains(stderr, "-o OUTPUT") {
		t.Errorf("missing -o: exit %d, output %q", code, stderr)
	}
}

// TestBadInputs checks that every bad input gives a one-line error, exit
// status 1, and no output file.
func TestBadInputs(t *testing.T) {
	requireTool(t, "gcc")
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cc := func(name string, args ...string) string {
		p := filepath.Join(dir, name)
		src := write(name+".c", []byte("#include <stdio.h>\nint f(void){return 1;}\nint main(void){puts(\"hi\");return f();}\n"))
		if b, err := exec.Command("gcc", append(args, "-o", p, src)...).CombinedOutput(); err != nil {
			t.Skipf("cannot build %s: %v %s", name, err, b)
		}
		return p
	}
	good := cc("good", "-O2")
	goodBytes, _ := os.ReadFile(good)

	arm := append([]byte(nil), goodBytes...)
	arm[18] = 183 // e_machine = EM_AARCH64
	class32 := append([]byte(nil), goodBytes...)
	class32[4] = 1 // ELFCLASS32
	rewritten := filepath.Join(dir, "rewritten")
	rewriteOK(t, good, rewritten)

	cases := []struct {
		name, input, want string
	}{
		{"text", write("text", []byte("#!/bin/sh\necho hi\n")), "not an ELF file"},
		{"empty", write("empty", nil), "not an ELF file"},
		{"truncated header", write("trunc", goodBytes[:20]), "corrupted"},
		{"truncated file", write("half", goodBytes[:len(goodBytes)/3]), "corrupted"},
		{"other machine", write("arm", arm), "x86-64"},
		{"32-bit", write("class32", class32), ""},
		{"object file", cc("obj.o", "-c"), "relocatable"},
		{"shared library", cc("lib.so", "-shared", "-fPIC"), "shared librar"},
		{"already rewritten", rewritten, "already rewritten"},
		{"missing", filepath.Join(dir, "does-not-exist"), "no such file"},
		{"directory", dir, "is a directory"},
	}
	if static := filepath.Join(dir, "static"); exec.Command("gcc", "-static", "-o", static, filepath.Join(dir, "good.c")).Run() == nil {
		cases = append(cases, struct{ name, input, want string }{"static", static, "statically linked"})
	} else {
		t.Log("static linking unavailable: static-executable case not run")
	}
	for _, c := range cases {
		out := filepath.Join(dir, "out-"+strings.ReplaceAll(c.name, " ", "_"))
		code, _, stderr := hgrewrite(t, c.input, "-o", out)
		if code != 1 || !strings.HasPrefix(stderr, "hgrewrite: ") || strings.Count(stderr, "\n") != 1 ||
			!strings.Contains(stderr, c.want) || strings.Contains(stderr, "panic") {
			t.Errorf("%s: exit %d, stderr %q; want exit 1 and one line containing %q", c.name, code, stderr, c.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s: output file left behind", c.name)
		}
	}

	// Output problems.
	code, _, stderr := hgrewrite(t, good, "-o", filepath.Join(dir, "no", "such", "dir", "x"))
	if code != 1 || !strings.Contains(stderr, "output directory") {
		t.Errorf("missing output dir: exit %d, %q", code, stderr)
	}
	code, _, stderr = hgrewrite(t, good, "-o", good)
	if code != 1 || !strings.Contains(stderr, "is the input file") {
		t.Errorf("output = input: exit %d, %q", code, stderr)
	}
	if os.Getuid() != 0 {
		ro := filepath.Join(dir, "ro")
		os.Mkdir(ro, 0o555)
		code, _, stderr = hgrewrite(t, good, "-o", filepath.Join(ro, "x"))
		if code != 1 || !strings.Contains(stderr, "cannot write") {
			t.Errorf("unwritable dir: exit %d, %q", code, stderr)
		}
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, ".*tmp*"))
	if len(leftovers) > 0 {
		t.Errorf("temporary files left behind: %v", leftovers)
	}
}

// TestStatsOutput checks that --stats reports the counts the issue names.
func TestStatsOutput(t *testing.T) {
	src := filepath.Join(repoRoot(t), "testdata", "progs", "switch_tables.c")
	dir := t.TempDir()
	bin := compile(t, src, dir, variant{opt: "-O2", pie: true, cet: true})
	code, stdout, stderr := hgrewrite(t, "--stats", bin, "-o", bin+".hg")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"instructions decoded:", "undecodable instructions:    0", "memory instructions:",
		"instrumented:", "skipped, ", "tactic jmp32:", "jump tables recovered:", "rewrite time:"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("--stats output lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "jump tables recovered:       0\n") {
		t.Errorf("no jump table recovered in switch_tables (gcc emits four):\n%s", stdout)
	}
}
