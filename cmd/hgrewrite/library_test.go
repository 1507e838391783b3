package main

import (
	"os"
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

// jemallocLib is Debian's jemalloc, which .ci/check-tools installs.
const jemallocLib = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"

// TestProgramAllocator: a program linked with an allocator of its own
// (testdata/libs/bumpalloc.c, a library defining malloc, free and the
// rest; and jemalloc, as Debian's redis-server is; one program,
// allocator_main.c, for both) keeps it when
// rewritten: the runtime's wrappers pass each call on to that allocator,
// not to glibc's, and the C library's own allocations (strdup, getline)
// go there too. Until 2026-11-29 the wrappers called glibc's: the
// bumpalloc program trapped on a block not of its allocator's, the
// jemalloc one crashed in jemalloc's malloc_usable_size, and
// redis-server.hg crashed at start-up. The runs must match the native
// ones, with no report.
func TestProgramAllocator(t *testing.T) {
	requireTool(t, "gcc")
	dir := t.TempDir()
	src := filepath.Join(repoRoot(t), "testdata", "libs")
	bump := filepath.Join(dir, "bumpalloc")
	builds := [][]string{
		{"-O2", "-shared", "-fPIC", "-pthread", "-o", filepath.Join(dir, "libbumpalloc.so"), filepath.Join(src, "bumpalloc.c")},
		{"-O2", "-pthread", "-DBUMPALLOC", "-o", bump, filepath.Join(src, "allocator_main.c"), "-L" + dir, "-lbumpalloc", "-Wl,-rpath," + dir},
	}
	progs := []string{bump}
	if _, err := os.Stat(jemallocLib); err == nil {
		jem := filepath.Join(dir, "jemalloc")
		builds = append(builds, []string{"-O2", "-pthread", "-DJEMALLOC", "-o", jem, filepath.Join(src, "allocator_main.c"), jemallocLib})
		progs = append(progs, jem)
	} else {
		t.Logf("%s missing: only the allocator of testdata/libs is tried", jemallocLib)
	}
	for _, c := range builds {
		if out, err := exec.Command("gcc", c...).CombinedOutput(); err != nil {
			t.Fatalf("gcc %v: %v\n%s", c, err, out)
		}
	}
	for _, bin := range progs {
		want := runProg(t, nil, bin)
		if want.status != "exit 0" {
			t.Fatalf("%s natively: %s\n%s%s", bin, want.status, want.stdout, want.stderr)
		}
		rewriteOK(t, bin, bin+".hg")
		for run := 0; run < 3; run++ {
			got := runProg(t, nil, bin+".hg")
			compareRuns(t, want, got)
			if strings.Contains(string(got.stderr), "data race") {
				t.Errorf("%s.hg: a race reported:\n%s", bin, got.stderr)
			}
		}
	}
}
