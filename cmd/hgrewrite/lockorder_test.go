package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// lockOrderCase is a program of testdata/lockorder and what a run of it
// rewritten must report: the inversion's mutexes, each as the report's
// location line names it, and the functions whose acquisitions make its
// edges; none for a program that must report nothing.
type lockOrderCase struct {
	src     string
	mutexes []string // "global 'first'", "heap block of size 48"
	funcs   []string // functions in the edges' stacks
}

var lockOrderCases = []lockOrderCase{
	{"two_globals.c", []string{"global 'first'", "global 'second'"}, []string{"forward", "backward"}},
	{"three_cycle.c", []string{"global 'ma'", "global 'mb'", "global 'mc'"}, []string{"hold_then_next"}},
	{"heap_mutex.c", []string{"heap block of size 48", "heap block of size 48"}, []string{"transfer"}},
	{"consistent_order.c", nil, nil},
	{"trylock_reverse.c", nil, nil},
	{"destroy_reinit.c", nil, nil},
}

var cycleRE = regexp.MustCompile(`Cycle in lock order graph: (M\d+ \(0x[0-9a-f]+\) => )+M1\n`)

// TestLockOrder: inversions of two and three mutexes, global and in
// heap blocks, are reported once each with the mutexes named and the
// acquisitions' stacks, and the exit status is 66; consistent orders,
// recursive locks, a reverse trylock and a mutex destroyed and made
// again report nothing. ThreadSanitizer (gcc -fsanitize=thread) reports
// the same three inversions and nothing for the other three programs.
func TestLockOrder(t *testing.T) {
	for _, c := range lockOrderCases {
		c := c
		t.Run(strings.TrimSuffix(c.src, ".c"), func(t *testing.T) {
			t.Parallel()
			src := filepath.Join(repoRoot(t), "testdata", "lockorder", c.src)
			dir := t.TempDir()
			bin := compile(t, src, dir, variant{opt: "-O2", pie: true})
			rewriteOK(t, bin, bin+".hg")
			out := runProg(t, []string{"HG_OPTIONS="}, bin+".hg")
			checkLockOrder(t, c, out)
		})
	}
}

func checkLockOrder(t *testing.T, c lockOrderCase, out outcome) {
	t.Helper()
	stderr := string(out.stderr)
	if c.mutexes == nil {
		if out.status != "exit 0" || strings.Contains(stderr, "WARNING") {
			t.Fatalf("%s: want no report and exit 0, got %s:\n%s", c.src, out.status, clip(out.stderr))
		}
		return
	}
	if out.status != "exit 66" {
		t.Errorf("%s: %s, want exit 66", c.src, out.status)
	}
	if n := strings.Count(stderr, "WARNING: hgrewrite: lock-order inversion (potential deadlock)"); n != 1 {
		t.Fatalf("%s: %d inversions reported, want 1:\n%s", c.src, n, clip(out.stderr))
	}
	if strings.Contains(stderr, "data race") || !strings.Contains(stderr, "SUMMARY: hgrewrite: 1 lock-order inversion(s)") {
		t.Errorf("%s: a race, or no summary of one inversion:\n%s", c.src, clip(out.stderr))
	}
	cycle := cycleRE.FindString(stderr)
	if strings.Count(cycle, "=>") != len(c.mutexes) {
		t.Errorf("%s: cycle %q, want %d mutexes", c.src, cycle, len(c.mutexes))
	}
	if n := strings.Count(stderr, "Mutex M"); n != 2*len(c.mutexes) {
		t.Errorf("%s: %d lines about mutexes, want an acquisition and a location each", c.src, n)
	}
	want := map[string]int{}
	for _, m := range c.mutexes {
		want[m]++
	}
	for m, n := range want {
		if got := len(regexp.MustCompile(`\n  Mutex M\d is `+regexp.QuoteMeta(m)).FindAllString(stderr, -1)); got != n {
			t.Errorf("%s: %d mutexes named %q, want %d:\n%s", c.src, got, m, n, clip(out.stderr))
		}
	}
	// every edge's acquisition shows its stack, innermost frame first
	acq := regexp.MustCompile(`acquired here while holding mutex M\d in thread T\d+:\n    #0 (\w+) `).FindAllStringSubmatch(stderr, -1)
	if len(acq) != len(c.mutexes) {
		t.Fatalf("%s: %d acquisitions with a stack, want %d:\n%s", c.src, len(acq), len(c.mutexes), clip(out.stderr))
	}
	seen := map[string]bool{}
	for _, m := range acq {
		seen[m[1]] = true
	}
	for _, f := range c.funcs {
		if !seen[f] {
			t.Errorf("%s: no acquisition in %s (stacks in %v)", c.src, f, seen)
		}
	}
}

// TestLockOrderOff: detect_deadlocks=0 keeps the graph off.
func TestLockOrderOff(t *testing.T) {
	src := filepath.Join(repoRoot(t), "testdata", "lockorder", "two_globals.c")
	bin := compile(t, src, t.TempDir(), variant{opt: "-O0", pie: false})
	rewriteOK(t, bin, bin+".hg")
	off := runProg(t, []string{"HG_OPTIONS=detect_deadlocks=0"}, bin+".hg")
	if off.status != "exit 0" || strings.Contains(string(off.stderr), "WARNING") {
		t.Errorf("detect_deadlocks=0: %s:\n%s", off.status, clip(off.stderr))
	}
	// the same binary (-O0 this time) with the option on reports
	on := runProg(t, []string{"HG_OPTIONS=detect_deadlocks=1"}, bin+".hg")
	checkLockOrder(t, lockOrderCases[0], on)
}
