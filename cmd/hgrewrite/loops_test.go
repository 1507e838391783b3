package main

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var loopCountRE = regexp.MustCompile(`loops: (\d+), wait-enclosing: (\d+), spinning-read: (\d+)`)

// waitCallRE finds condition waits in a corpus program's source.
var waitCallRE = regexp.MustCompile(`pthread_cond_(timed|clock)?wait\s*\(|\.wait(_for|_until)?\s*\(`)

// TestListLoops runs --list-loops --stats on the race corpus at -O0 and
// -O2: every program that waits on a condition variable has a
// wait-enclosing loop and no other program has one; every program that
// needs spinning-read loop detection has a spinning-read loop, and the
// list walk of fig. 7.8 has none.
func TestListLoops(t *testing.T) {
	// Programs whose synchronisation is found another way at one
	// optimisation level.
	noSpinLoop := map[string]string{
		"cxx_atomic_bool_flag -O0":                "std::atomic<bool>::load is an out-of-line call at -O0 with nested calls; its load is an acquire through markAtomicAccessors",
		"cxx_refcount_use_after_release_race -O0": "the same: std::atomic<int>::load is out of line at -O0",
	}
	for _, p := range raceCorpus(t) {
		p := p
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			src, err := os.ReadFile(p.path)
			if err != nil {
				t.Fatal(err)
			}
			waits := waitCallRE.Match(src)
			for _, opt := range []string{"-O0", "-O2"} {
				bin, _ := built(t, p.path, variant{opt: opt, pie: true})
				code, out, errOut := hgrewrite(t, "--list-loops", "--stats", bin)
				if code != 0 {
					t.Fatalf("%s: exit %d: %s", opt, code, errOut)
				}
				m := loopCountRE.FindStringSubmatch(out)
				if m == nil {
					t.Fatalf("%s: no counts in:\n%s", opt, out)
				}
				nWait, _ := strconv.Atoi(m[2])
				nSpin, _ := strconv.Atoi(m[3])
				if waits != (nWait > 0) {
					t.Errorf("%s: %d wait-enclosing loops, source waits: %v\n%s", opt, nWait, waits, out)
				}
				if strings.Count(out, "wait loop in ") != nWait || strings.Count(out, "spinning-read loop in ") != nSpin {
					t.Errorf("%s: listing does not match the counts:\n%s", opt, out)
				}
				_, excused := noSpinLoop[p.name+" "+opt]
				if strings.Contains(p.needs, "spin") && nSpin == 0 && !excused {
					t.Errorf("%s: needs spin but no spinning-read loop found:\n%s", opt, out)
				}
				if strings.HasPrefix(p.name, "list_walk_not_spin") && nSpin != 0 {
					t.Errorf("%s: the list walk is not a spinning-read loop:\n%s", opt, out)
				}
			}
		})
	}
}

// TestLoopModes shows what the loop handling changes on programs whose
// order is forced by sleeps: with lsd=no, a waiter that finds the
// condition already true (lost signal) gets no happens-before edge and
// the data it reads is reported (lock hand-offs, which would order it
// through the flag read under the mutex, are off too); with spin=no, a spinning read loop is
// not synchronisation. The default options report nothing. Each bad mode
// must show its false report in at least one of three runs (the sleeps
// make it all but certain).
func TestLoopModes(t *testing.T) {
	cases := []struct {
		prog, bad, racy string
	}{
		{"cv_lost_signal_fig6_1.c", "lsd=no handoff=no", "DATA"},
		{"cv_shared_two_pairs_lost_signals_fig6_6.c", "lsd=no handoff=no", "DATA_X"},
		{"spin_flag_entered_after_write.c", "spin=no", "DATA"},
	}
	for _, c := range cases {
		c := c
		t.Run(c.prog, func(t *testing.T) {
			t.Parallel()
			src := repoRoot(t) + "/testdata/races/" + c.prog
			dir := t.TempDir()
			bin := compile(t, src, dir, variant{opt: "-O2", pie: true})
			rewriteOK(t, bin, bin+".hg")
			for _, mode := range []string{"", "lsd=yes", c.bad} {
				reported := false
				for run := 0; run < 3 && !reported; run++ {
					out := runProg(t, []string{"HG_OPTIONS=exitcode=0 " + mode}, bin+".hg")
					reported = strings.Contains(string(out.stderr), "Location is global '"+c.racy+"'")
					if mode != c.bad {
						if strings.Contains(string(out.stderr), "WARNING") {
							t.Fatalf("HG_OPTIONS=%q: false report:\n%s", mode, clip(out.stderr))
						}
						break
					}
				}
				if mode == c.bad && !reported {
					t.Errorf("HG_OPTIONS=%q: expected the false report on %s in one of three runs", mode, c.racy)
				}
			}
		})
	}
}

// TestDumpCFG: --dump-cfg writes one Graphviz file per function holding a
// wait or spinning-read loop, and rewriting with it still works.
func TestDumpCFG(t *testing.T) {
	dir := t.TempDir()
	src := repoRoot(t) + "/testdata/races/cv_lost_signal_fig6_1.c"
	bin := compile(t, src, dir, variant{opt: "-O2", pie: true})
	dots := dir + "/dots"
	if code, _, errOut := hgrewrite(t, "--list-loops", "--dump-cfg", dots, bin); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	ents, err := os.ReadDir(dots)
	if err != nil || len(ents) != 1 {
		t.Fatalf("want one file in %s, got %v (%v)", dots, ents, err)
	}
	if !strings.HasPrefix(ents[0].Name(), "thread_2_") || !strings.HasSuffix(ents[0].Name(), ".dot") {
		t.Errorf("file name %q: want thread_2_<addr>.dot", ents[0].Name())
	}
	b, _ := os.ReadFile(dots + "/" + ents[0].Name())
	if !strings.HasPrefix(string(b), "digraph") || !strings.Contains(string(b), "pthread_cond_wait") {
		t.Errorf("not a graph of the wait loop:\n%s", b)
	}
}
