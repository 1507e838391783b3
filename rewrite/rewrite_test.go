package rewrite

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"hgrewrite/elfrw"
)

// compileC builds a C program with gcc -O2 -pthread and opens it; it
// skips the test without gcc.
func compileC(t *testing.T, src string) *elfrw.Binary {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not found")
	}
	dir := t.TempDir()
	c, out := filepath.Join(dir, "prog.c"), filepath.Join(dir, "prog")
	if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command("gcc", "-O2", "-pthread", "-o", out, c).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, b)
	}
	bin, err := elfrw.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// TestSelfCheck: the check after writing accepts the one error a good
// output gives (it loads the runtime library: ErrAlreadyRewritten) and
// reports any other, although Parse gives every error as an *elfrw.Error.
func TestSelfCheck(t *testing.T) {
	bin := compileC(t, "#include <stdio.h>\nint main(void){puts(\"hi\");return 0;}\n")
	res, err := Rewrite(bin, Options{Loops: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := elfrw.Parse(res.Image); !errors.Is(err, elfrw.ErrAlreadyRewritten) {
		t.Fatalf("Parse(output) = %v, want ErrAlreadyRewritten", err)
	}
	if err := selfCheck(res.Image); err != nil {
		t.Errorf("selfCheck(output) = %v", err)
	}
	for name, img := range map[string][]byte{
		"truncated": res.Image[:len(res.Image)/3],
		"not ELF":   []byte("#!/bin/sh\n"),
	} {
		_, perr := elfrw.Parse(img)
		var e *elfrw.Error
		if !errors.As(perr, &e) {
			t.Fatalf("%s: Parse = %v, want an *elfrw.Error", name, perr)
		}
		if err := selfCheck(img); err == nil || !strings.HasPrefix(err.Error(), "internal error: output does not parse: ") {
			t.Errorf("%s: selfCheck = %v, want the internal error", name, err)
		}
	}
}
