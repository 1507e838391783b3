package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// annotationScenarios are testdata/annotations/annotations.c's scenarios
// with the global variables whose races must be reported (none: no
// report at all).
var annotationScenarios = []struct {
	mode string
	racy []string
}{
	{"handoff", nil},
	{"handoff-bare", []string{"data"}},
	{"benign", []string{"racy"}},
	{"ignore", nil},
	{"ignore-bare", []string{"shared"}},
}

// annotationAPIs are the forms the annotations take, with the compiler
// flags that select them and the header they need.
var annotationAPIs = []struct {
	name, flag, header string
}{
	{"tsan", "", ""},
	{"helgrind", "-DHELGRIND", "/usr/include/valgrind/helgrind.h"},
	{"drd", "-DDRD", "/usr/include/valgrind/drd.h"},
}

var (
	raceLocRE  = regexp.MustCompile(`Location is global '(\w+)'`)
	racePairRE = regexp.MustCompile(`(Read|Write) of size \d+ at 0x[0-9a-f]+ by thread T(\d+):[\s\S]*?Previous (read|write) of size \d+ by thread T(\d+):`)
)

// racyGlobals are the global variables the reports in stderr name, sorted.
func racyGlobals(stderr string) []string {
	var names []string
	for _, m := range raceLocRE.FindAllStringSubmatch(stderr, -1) {
		names = append(names, m[1])
	}
	sort.Strings(names)
	return names
}

// TestAnnotations: a program's own annotations order its threads and
// declare its benign races, in each form (ThreadSanitizer's functions,
// defined empty in the program and called directly; Helgrind's and DRD's
// client requests) and at -O0 (the functions' entries are hooked) and -O2
// (an empty function is a lone ret: its calls are hooked). The spinning-read
// loop heuristic is off (spin=no), so that the annotations are the only
// ordering of the hand-off. The same scenarios without the annotation
// must report the race: two threads, one of them writing, on the right
// variable. The program's output is the native one.
func TestAnnotations(t *testing.T) {
	requireTool(t, "gcc")
	dir := t.TempDir()
	src := filepath.Join(repoRoot(t), "testdata", "annotations", "annotations.c")
	for _, api := range annotationAPIs {
		if api.header != "" {
			if _, err := os.Stat(api.header); err != nil {
				t.Logf("%s: %s absent, skipped", api.name, api.header)
				continue
			}
		}
		for _, opt := range []string{"-O0", "-O2"} {
			name := api.name + opt
			bin := filepath.Join(dir, name)
			args := []string{opt, "-g", "-pthread", "-o", bin, src}
			if api.flag != "" {
				args = append(args, api.flag)
			}
			if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
				t.Fatalf("gcc %v: %v\n%s", args, err, out)
			}
			hg := bin + ".hg"
			rewriteOK(t, bin, hg)
			for _, sc := range annotationScenarios {
				want := runProg(t, nil, bin, sc.mode)
				if want.status == "exit 77" {
					continue // the form has no such annotation
				}
				got := runProg(t, []string{"HG_OPTIONS=spin=no exitcode=0"}, hg, sc.mode)
				compareRuns(t, want, got)
				checkAnnotationRun(t, name+" "+sc.mode, string(got.stderr), sc.racy)
			}
		}
	}
}

// checkAnnotationRun checks that the reports in stderr name exactly the
// variables racy, each a race between two threads with a write.
func checkAnnotationRun(t *testing.T, what, stderr string, racy []string) {
	t.Helper()
	if got := racyGlobals(stderr); !reflect.DeepEqual(got, racy) {
		t.Errorf("%s: races reported on %v, want %v:\n%s", what, got, racy, stderr)
		return
	}
	for _, m := range racePairRE.FindAllStringSubmatch(stderr, -1) {
		if m[2] == m[4] || m[1] == "Read" && m[3] == "read" {
			t.Errorf("%s: not a race between two threads with a write: %q\n%s", what, m[0], stderr)
		}
	}
}

// TestImportedAnnotations: a program that imports the annotation
// functions from a shared library (a project's own libdynamic_annotations)
// calls them through the PLT (linked --no-as-needed: the declarations are
// weak, and the linker would drop a library that only weak references
// need); the runtime's definitions of the same names
// come first (runtime/annotations.c) and act on them.
func TestImportedAnnotations(t *testing.T) {
	requireTool(t, "gcc")
	dir := t.TempDir()
	src := filepath.Join(repoRoot(t), "testdata", "annotations")
	lib := filepath.Join(dir, "libann.so")
	bin := filepath.Join(dir, "imported")
	for _, c := range [][]string{
		{"-O2", "-shared", "-fPIC", "-o", lib, filepath.Join(src, "annotations_lib.c")},
		{"-O2", "-g", "-pthread", "-DTSAN_RUNTIME", "-o", bin, filepath.Join(src, "annotations.c"), "-L" + dir, "-Wl,--no-as-needed", "-lann", "-Wl,-rpath," + dir},
	} {
		if out, err := exec.Command("gcc", c...).CombinedOutput(); err != nil {
			t.Fatalf("gcc %v: %v\n%s", c, err, out)
		}
	}
	hg := bin + ".hg"
	rewriteOK(t, bin, hg)
	for _, sc := range annotationScenarios {
		want := runProg(t, nil, bin, sc.mode)
		got := runProg(t, []string{"HG_OPTIONS=spin=no exitcode=0"}, hg, sc.mode)
		compareRuns(t, want, got)
		checkAnnotationRun(t, "imported "+sc.mode, string(got.stderr), sc.racy)
	}
}

// TestAnnotationsAsThreadSanitizer: ThreadSanitizer (gcc -fsanitize=thread,
// whose runtime defines the annotation functions) gives the scenarios the
// verdicts TestAnnotations expects of hgrewrite. Skipped where
// ThreadSanitizer cannot build or run. ThreadSanitizer itself sometimes
// misses a race here on a loaded machine (benign: 7 runs of 300 beside
// six busy loops reported nothing, where hgrewrite missed none of 300;
// `make test` failed on it once): a scenario with races gets up to
// tsanTries runs to show them, and every run must report nothing else.
func TestAnnotationsAsThreadSanitizer(t *testing.T) {
	requireTool(t, "gcc")
	dir := t.TempDir()
	src := filepath.Join(repoRoot(t), "testdata", "annotations", "annotations.c")
	bin := filepath.Join(dir, "tsan")
	if out, err := exec.Command("gcc", "-O1", "-g", "-fsanitize=thread", "-pthread", "-DTSAN_RUNTIME", "-o", bin, src).CombinedOutput(); err != nil {
		t.Skipf("gcc -fsanitize=thread: %v\n%s", err, out)
	}
	if probe := runProg(t, nil, bin, "handoff"); probe.status != "exit 0" || strings.Contains(string(probe.stderr), "FATAL") {
		t.Skipf("ThreadSanitizer does not run here: %s\n%s", probe.status, probe.stderr)
	}
	for _, sc := range annotationScenarios {
		for try := 1; ; try++ {
			got := runProg(t, []string{"TSAN_OPTIONS=exitcode=0"}, bin, sc.mode)
			found := racyGlobals(string(got.stderr))
			if len(found) == 0 && len(sc.racy) > 0 && try < tsanTries {
				continue // ThreadSanitizer's miss; nothing false was reported
			}
			checkAnnotationRun(t, "tsan "+sc.mode, string(got.stderr), sc.racy)
			break
		}
	}
}

// tsanTries bounds the runs TestAnnotationsAsThreadSanitizer gives
// ThreadSanitizer to report a scenario's races.
const tsanTries = 3

// TestRunningOnValgrind: RUNNING_ON_VALGRIND is 0 in the rewritten program,
// as natively: hgrewrite is not Valgrind, and a program that tests it
// keeps its native behaviour.
func TestRunningOnValgrind(t *testing.T) {
	requireTool(t, "gcc")
	if _, err := os.Stat("/usr/include/valgrind/valgrind.h"); err != nil {
		t.Skip("valgrind.h absent")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "running")
	src := filepath.Join(repoRoot(t), "testdata", "annotations", "annotations.c")
	if out, err := exec.Command("gcc", "-O2", "-pthread", "-DHELGRIND", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	hg := bin + ".hg"
	rewriteOK(t, bin, hg)
	want, got := runProg(t, nil, bin, "running"), runProg(t, nil, hg, "running")
	compareRuns(t, want, got)
	if string(got.stdout) != "RUNNING_ON_VALGRIND 0\n" {
		t.Errorf("rewritten program printed %q", got.stdout)
	}
}
