package main

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestLibraryMutexHandOff: a library that is not rewritten hands a buffer
// to its own worker thread under its own mutex (testdata/libs). The
// detector sees only the library's calls: the two copies (memcpy) and the
// mutex and condition variable. The hand-off is ordered, whether the
// worker waits for it or finds it done, so no race may be reported; with
// HL_RACY the worker copies the buffer while the program's thread fills
// it, and the race between the two copies must be reported, on the
// library's heap block, as a read by one thread against a write by the
// other.
func TestLibraryMutexHandOff(t *testing.T) {
	requireTool(t, "gcc")
	dir := t.TempDir()
	src := filepath.Join(repoRoot(t), "testdata", "libs")
	lib := filepath.Join(dir, "libhandoff.so")
	bin := filepath.Join(dir, "handoff")
	for _, c := range [][]string{
		{"-O2", "-shared", "-fPIC", "-pthread", "-o", lib, filepath.Join(src, "handoff_lib.c")},
		{"-O2", "-pthread", "-o", bin, filepath.Join(src, "handoff_main.c"), "-L" + dir, "-lhandoff", "-Wl,-rpath," + dir},
	} {
		if out, err := exec.Command("gcc", c...).CombinedOutput(); err != nil {
			t.Fatalf("gcc %v: %v\n%s", c, err, out)
		}
	}
	hg := bin + ".hg"
	rewriteOK(t, bin, hg)
	want := runProg(t, nil, bin)
	for _, late := range []string{"", "HL_LATE=1"} {
		for _, args := range [][]string{nil, {"wait"}} {
			got := runProg(t, []string{late}, hg, args...)
			compareRuns(t, want, got)
			if strings.Contains(string(got.stderr), "data race") {
				t.Errorf("%s %v: a race reported on an ordered hand-off:\n%s", late, args, got.stderr)
			}
		}
	}
	got := runProg(t, []string{"HL_RACY=1", "HG_OPTIONS=exitcode=0"}, hg)
	compareRuns(t, want, got)
	rep := string(got.stderr)
	pair := regexp.MustCompile(`(Read|Write) of size \d+ at 0x[0-9a-f]+ by thread T(\d+):[\s\S]*?Previous (read|write) of size \d+ by thread T(\d+):`)
	m := pair.FindStringSubmatch(rep)
	switch {
	case m == nil:
		t.Fatalf("HL_RACY: the race between the copies was not reported:\n%s", rep)
	case m[2] == m[4]:
		t.Errorf("HL_RACY: both accesses by thread T%s:\n%s", m[2], rep)
	case m[1] == "Read" && m[3] == "read":
		t.Errorf("HL_RACY: two reads reported as a race:\n%s", rep)
	case !strings.Contains(rep, "Location is heap block"):
		t.Errorf("HL_RACY: the report does not name the library's heap block:\n%s", rep)
	}
}
