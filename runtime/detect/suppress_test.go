package detect

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTemplateMatch(t *testing.T) {
	for _, c := range []struct {
		pattern, name string
		want          bool
	}{
		{"bump", "bump", true},
		{"bump", "do_bump_now", true}, // unanchored: anywhere
		{"^bump", "do_bump", false},
		{"^bump", "bump_all", true},
		{"bump$", "bump_all", false},
		{"bump$", "do_bump", true},
		{"^bump$", "bump", true},
		{"^bump$", "bumps", false},
		{"std::*::push", "std::vector<int>::push", true},
		{"^std::*push$", "std::vector<int>::push_back", false},
		{"^a*b*c$", "aXbYc", true},
		{"^a*b*c$", "aXcYb", false},
		{"*", "anything", true},
		{"lib*.so", "/usr/lib/libfoo.so.1", true},
		{"abab$", "ababab", true},
	} {
		if got := templateMatch(c.pattern, c.name); got != c.want {
			t.Errorf("templateMatch(%q, %q) = %v, want %v", c.pattern, c.name, got, c.want)
		}
	}
}

// twoRaces is a report of each kind the rules look at: a race between two
// functions on a global, by a named thread.
func ruleReport() *raceReport {
	return &raceReport{Kind: kindRace,
		Accesses: []reportAccess{
			{Kind: "write", TID: 2, Stack: []Frame{{Func: "memcpy", Module: "libc.so.6"}, {Func: "copy_in", File: "/src/io.c", Line: 4, Module: "prog"}}},
			{Kind: "read", TID: 1, Stack: []Frame{{Func: "reader", File: "/src/main.c", Line: 9, Module: "prog"}}},
		},
		Location: reportLocation{Kind: "global", Name: "shared_buf", Module: "prog"},
		Threads:  []reportThread{{TID: 2, Name: "io-worker", Created: []Frame{{Func: "start_pool"}}}, {TID: 1}},
		Later:    []Frame{{Func: "flush_all", Module: "prog"}},
	}
}

func TestSuppressionKinds(t *testing.T) {
	for _, c := range []struct {
		rule string
		want bool
	}{
		{"race:reader", true},      // a frame of the previous access
		{"race:copy_in", true},     // an outer frame of the current one
		{"race:io.c", true},        // a source file
		{"race:flush_all", true},   // the stack after the access
		{"race:shared_buf", true},  // the global
		{"race:start_pool", false}, // creation stacks are not the race's
		{"race:^copy$", false},
		{"race_top:memcpy", true},
		{"race_top:copy_in", false}, // not innermost
		{"race_top:reader", true},
		{"called_from_lib:libc.so", true},
		{"called_from_lib:libz.so", false},
		{"thread:io-worker", true},
		{"thread:start_pool", true},
		{"thread:main", false},
		{"deadlock:reader", false}, // a race is no lock-order report
		{"mutex:reader", false},
	} {
		kind, pattern, _ := strings.Cut(c.rule, ":")
		got := suppression{kind: kind, pattern: pattern}.matches(ruleReport())
		if got != c.want {
			t.Errorf("%s matches = %v, want %v", c.rule, got, c.want)
		}
	}
}

func writeSuppressions(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "supp.txt")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSuppressionsFileErrors(t *testing.T) {
	if err := CheckSuppressions(writeSuppressions(t, "# ok\n\nrace:foo\n  race_top:bar  \n")); err != nil {
		t.Errorf("valid file refused: %v", err)
	}
	bad := writeSuppressions(t, "race:foo\nraces:bar\n")
	if err := CheckSuppressions(bad); err == nil || !strings.Contains(err.Error(), bad+":2:") {
		t.Errorf("unknown type: error %v, want one naming %s:2", err, bad)
	}
	if err := CheckSuppressions(writeSuppressions(t, "race:\n")); err == nil {
		t.Error("empty pattern accepted")
	}
	if err := CheckSuppressions(filepath.Join(t.TempDir(), "missing")); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing file: error %v", err)
	}
}

// A suppressed race is neither printed nor counted; the others are; the
// rules used are listed at exit with stats=1.
func TestSuppressedRace(t *testing.T) {
	exe := buildProgram(t, symbolsProgram)
	syms := elfSymbols(t, exe)
	supp := writeSuppressions(t, "# the counter is benign\nrace:^bump$\nrace:nothing_matches_this\n")
	b := newBench(t, "stats=1:suppressions="+supp)
	b.d.rep.sym.exe = exe
	t1 := b.create(0, syms["main"]+5)
	t2 := b.create(0, 0x510)
	b.flush(t1, wr(syms["counter"]+8, 4, uint32(syms["bump"])))
	b.flush(t2, wr(syms["counter"]+8, 4, uint32(syms["bump"]+4)), wr(syms["_ZN2ns5valueE"], 4, 0x2001))
	b.flush(t1, wr(syms["_ZN2ns5valueE"], 4, 0x1001))
	races, out := b.finish()
	wantReports(t, races, out, 1,
		fmt.Sprintf("  Location is global 'demangled:_ZN2ns5valueE' of size 4 at %#x", syms["_ZN2ns5valueE"]),
		"SUMMARY: hgrewrite: 1 data race(s) reported in prog\n",
		"hgrewrite: 1 report(s) suppressed\nhgrewrite: 1 race:^bump$ (line 2)\n")
	if strings.Contains(out, "'counter'") {
		t.Errorf("the suppressed race was printed:\n%s", out)
	}
}
