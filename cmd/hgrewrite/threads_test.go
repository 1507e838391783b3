package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestThreadNamesAndStacks: reports name the threads the program named
// (pthread_setname_np on itself and on another thread, prctl
// PR_SET_NAME, the main thread; a refused name changes nothing), show the
// creator's stack through a wrapper function (spawn, then main's call of
// it), and put calls (pthread_create, malloc) on their own line, not the
// next one. Built with -g alone: line tables, and no optimisation (gcc's
// default -O0), so the lines of the calls stay apart.
func TestThreadNamesAndStacks(t *testing.T) {
	src := filepath.Join(repoRoot(t), "testdata", "reports", "thread_names.c")
	create, spawnCall, mallocCall := markedLine(t, src, "create-call"), markedLine(t, src, "main-calls-spawn"), markedLine(t, src, "malloc-call")
	dir := t.TempDir()
	bin := compile(t, src, dir, variant{opt: "-g", pie: true})
	rewriteOK(t, bin, bin+".hg")
	out := runProg(t, []string{"HG_OPTIONS=exitcode=0"}, bin+".hg")
	stderr := string(out.stderr)
	if out.status != "exit 0" || strings.Count(stderr, "WARNING: hgrewrite: data race") != 2 {
		t.Fatalf("%s, want exit 0 and two reports:\n%s", out.status, clip(out.stderr))
	}
	frame := func(fn string, line int) string {
		return fmt.Sprintf(`    #\d+ %s thread_names\.c:%d \(`, fn, line)
	}
	for _, want := range []string{
		// worker is spawned from the line marked main-calls-spawn, helper
		// from the next one
		`  Thread T1 'worker' created by T0 at:\n` + frame("spawn", create) + `.*\n` + frame("main", spawnCall) + `.*\n`,
		`  Thread T2 'helper' created by T0 at:\n` + frame("spawn", create) + `.*\n` + frame("main", spawnCall+1) + `.*\n`,
		`  Thread T0 'boss' is the main thread\.\n`,
		`allocated by thread T0 at:\n` + frame("main", mallocCall) + `.*\n`,
	} {
		if !regexp.MustCompile(want).MatchString(stderr) {
			t.Errorf("no match for %q in:\n%s", want, clip(out.stderr))
		}
	}
	if strings.Contains(stderr, "a-name-of") {
		t.Errorf("a refused name was recorded:\n%s", clip(out.stderr))
	}
}

// markedLine is the number of the line of src that holds the comment
// /* marker */.
func markedLine(t *testing.T, src, marker string) int {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, "/* "+marker+" */") {
			return i + 1
		}
	}
	t.Fatalf("%s has no line marked %s", src, marker)
	return 0
}
