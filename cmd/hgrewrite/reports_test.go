package main

import (
	"bufio"
	"bytes"
	"debug/elf"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"hgrewrite/runtime/detect/sarifcheck"
)

// reportProgram builds testdata/reports/<name>.c at opt as <name> and
// rewrites it to <name>.hg; it returns the rewritten program and the
// source's marked lines.
func reportProgram(t *testing.T, name, opt string) (hg string, lines map[string]int) {
	t.Helper()
	requireTool(t, "gcc")
	src := filepath.Join(repoRoot(t), "testdata", "reports", name+".c")
	dir := t.TempDir()
	bin := filepath.Join(dir, name)
	if out, err := exec.Command("gcc", opt, "-g", "-pthread", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	hg = bin + ".hg"
	rewriteOK(t, bin, hg)
	return hg, markedLines(t, src)
}

// markedLines maps the markers of a source file's "/* NAME */" comments to
// their line numbers, so that tests do not hard-code them.
func markedLines(t *testing.T, src string) map[string]int {
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	marks := map[string]int{}
	mark := regexp.MustCompile(`/\* ([A-Z]+) \*/`)
	for i, line := range strings.Split(string(data), "\n") {
		if m := mark.FindStringSubmatch(line); m != nil {
			marks[m[1]] = i + 1
		}
	}
	return marks
}

// The text report of scores.c at -O0 and -O2: the right variable, the two
// threads by name, both accesses on the marked line (a write by the
// second thread against the first's), the creation stacks through the
// helper that calls pthread_create on its own line, and the stack after
// the access through libc's qsort, named.
func TestReportText(t *testing.T) {
	for _, opt := range []string{"-O0", "-O2"} {
		t.Run(opt, func(t *testing.T) {
			hg, lines := reportProgram(t, "scores", opt)
			got := runProg(t, nil, hg)
			if got.status != "exit 66" {
				t.Fatalf("status %s, want exit 66:\n%s", got.status, got.stderr)
			}
			rep := string(got.stderr)
			race := fmt.Sprintf("add_score scores.c:%d ", lines["RACE"])
			create := fmt.Sprintf("start scores.c:%d ", lines["CREATE"])
			// an increment is a write at -O0 and a read-write at -O2
			access := regexp.MustCompile(`  (Write|Read-write) of size 8 at 0x[0-9a-f]+ by thread T2:\n    #0 ` + regexp.QuoteMeta(race) +
				`[^\n]*\n(    #\d+ [^\n]*\n)*  Previous (write|read-write) of size 8 by thread T1:\n    #0 ` + regexp.QuoteMeta(race))
			// libc's qsort is named from its symbols (qsort or qsort_r,
			// by glibc version), with its debug file's lines if installed
			if !regexp.MustCompile(`    #\d+ qsort\w* [^\n]*\(libc\.so\.6\+0x[0-9a-f]+\)\n    #\d+ sorter scores\.c:`).MatchString(rep) {
				t.Errorf("report lacks the frame of libc's qsort below sorter:\n%s", rep)
			}
			// At -O0 add_score is still running at the next interposed
			// call (note's lock), so its callers are the access's; at -O2
			// it tail-calls note, which tail-calls the unlock, whose frame
			// took add_score's over: its DWARF call sites say so, and the
			// callers are found as well.
			callers := regexp.MustCompile(`by thread T2:\n    #0 ` + regexp.QuoteMeta(race) + `[^\n]*\n    #1 by_value scores\.c:\d+ [^\n]*\n(    #\d+ [^\n]*\n)*    #\d+ sorter scores\.c:\d+ `)
			if !callers.MatchString(rep) || strings.Contains(rep, "Stack of T2 at its next") {
				t.Errorf("the current access's stack lacks its callers (by_value ... sorter):\n%s", rep)
			}
			// The previous access's callers come from T1's call trace
			// (T1 has exited by then); at -O2 tally_round tail-calls
			// add_score, and the trace shows it at the jump.
			previous := regexp.MustCompile(`  Previous (write|read-write) of size 8 by thread T1:\n    #0 ` + regexp.QuoteMeta(race) +
				`[^\n]*\n    #1 tally_round[\w.]* ` + regexp.QuoteMeta(fmt.Sprintf("scores.c:%d ", lines["TALLY"])) +
				`[^\n]*\n    #2 ` + regexp.QuoteMeta(fmt.Sprintf("scorer scores.c:%d ", lines["SCORER"])) + `[^\n]*\n  Location`)
			if !previous.MatchString(rep) {
				t.Errorf("the previous access's stack lacks its callers (tally_round, scorer):\n%s", rep)
			}
			if !access.MatchString(rep) {
				t.Errorf("report lacks T2's write against T1's on line %d:\n%s", lines["RACE"], rep)
			}
			for _, want := range []string{
				"WARNING: hgrewrite: data race (pid ",
				"  Location is global 'score_total' of size 8 at 0x",
				"  Thread T2 'sorter' created by T0 at:\n    #0 " + create,
				"  Thread T1 'scorer' created by T0 at:\n    #0 " + create,
				"    #1 main scores.c:",
				"SUMMARY: hgrewrite: 1 data race(s) reported in scores.hg\n",
			} {
				if !strings.Contains(rep, want) {
					t.Errorf("report lacks %q:\n%s", want, rep)
				}
			}
		})
	}
}

// A stripped program whose debug information sits in a separate file
// (objcopy --only-keep-debug, --add-gnu-debuglink, as Debian's -dbg
// packages are made) is reported with its functions, lines and globals:
// the debug file is found beside the rewritten program, or in its
// .debug directory.
func TestReportSeparateDebugFile(t *testing.T) {
	requireTool(t, "objcopy")
	requireTool(t, "strip")
	for _, where := range []string{".", ".debug"} {
		hg, lines := reportProgram(t, "scores", "-O2")
		dir := filepath.Dir(hg)
		bin := strings.TrimSuffix(hg, ".hg")
		debug := filepath.Join(dir, where, "scores.debug")
		if err := os.MkdirAll(filepath.Dir(debug), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, c := range [][]string{
			{"objcopy", "--only-keep-debug", bin, debug},
			{"strip", "--strip-all", bin},
			{"objcopy", "--add-gnu-debuglink=" + debug, bin},
		} {
			if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
				t.Fatalf("%v: %v\n%s", c, err, out)
			}
		}
		if f, err := elf.Open(bin); err != nil || f.Section(".debug_info") != nil || f.Section(".symtab") != nil {
			t.Fatalf("%s: not stripped (%v)", bin, err)
		}
		rewriteOK(t, bin, hg)
		rep := string(runProg(t, nil, hg).stderr)
		for _, want := range []string{
			fmt.Sprintf("    #0 add_score scores.c:%d (scores.hg+0x", lines["RACE"]),
			"  Location is global 'score_total' of size 8 at 0x",
			fmt.Sprintf("  Thread T2 'sorter' created by T0 at:\n    #0 start scores.c:%d ", lines["CREATE"]),
		} {
			if !strings.Contains(rep, want) {
				t.Errorf("debug file in %s: report lacks %q:\n%s", where, want, rep)
			}
		}
	}
}

// A stripped program with no debug file to be found (Debian's binaries
// without their -dbgsym package) has no names for its variables: the
// location is placed in its data section, with what would name it, where
// it said "not a global variable or live heap block" (an outsider's
// memcached: every report on its globals).
func TestReportStrippedLocation(t *testing.T) {
	requireTool(t, "strip")
	hg, _ := reportProgram(t, "scores", "-O2")
	bin := strings.TrimSuffix(hg, ".hg")
	if out, err := exec.Command("strip", "--strip-all", bin).CombinedOutput(); err != nil {
		t.Fatalf("strip: %v\n%s", err, out)
	}
	rewriteOK(t, bin, hg)
	rep := string(runProg(t, nil, hg).stderr)
	want := regexp.MustCompile(`  Location is in \.bss of scores\.hg, at offset 0x[0-9a-f]+, at 0x[0-9a-f]+ \(scores\.hg\+0x[0-9a-f]+\): the program is stripped`)
	if !want.MatchString(rep) {
		t.Errorf("report does not place the stripped program's global in .bss:\n%s", rep)
	}
}

// json_path and sarif_path (with %p) get the same report, parsed back
// here; a suppressions file makes it go away, with exit status 0; bad
// suppressions stop the program before it runs.
func TestReportFilesAndSuppressions(t *testing.T) {
	hg, lines := reportProgram(t, "scores", "-O2")
	dir := t.TempDir()
	opts := "HG_OPTIONS=json_path=" + filepath.Join(dir, "r.%p.json") + ":sarif_path=" + filepath.Join(dir, "r.%p.sarif")
	got := runProg(t, []string{opts}, hg)
	if got.status != "exit 66" {
		t.Fatalf("status %s:\n%s", got.status, got.stderr)
	}
	pid := regexp.MustCompile(`data race \(pid (\d+)\)`).FindStringSubmatch(string(got.stderr))
	if pid == nil {
		t.Fatalf("no report:\n%s", got.stderr)
	}
	checkJSONReport(t, filepath.Join(dir, "r."+pid[1]+".json"), lines["RACE"])
	checkSARIF(t, filepath.Join(dir, "r."+pid[1]+".sarif"), lines["RACE"])

	for _, c := range []struct {
		rules  string
		status string
	}{
		{"race:^add_score$\n", "exit 0"},
		{"# the later stack counts too\nrace:sorter\n", "exit 0"},
		{"race:score_total\n", "exit 0"},
		{"thread:scorer\n", "exit 0"},
		{"race_top:note\nrace:nothing_like_this\n", "exit 66"},
	} {
		supp := filepath.Join(dir, "supp.txt")
		if err := os.WriteFile(supp, []byte(c.rules), 0o644); err != nil {
			t.Fatal(err)
		}
		got := runProg(t, []string{"HG_OPTIONS=suppressions=" + supp}, hg)
		if got.status != c.status || (c.status == "exit 0") == strings.Contains(string(got.stderr), "data race") {
			t.Errorf("suppressions %q: %s, want %s:\n%s", c.rules, got.status, c.status, got.stderr)
		}
	}
	supp := filepath.Join(dir, "bad.txt")
	if err := os.WriteFile(supp, []byte("races:add_score\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got = runProg(t, []string{"HG_OPTIONS=suppressions=" + supp}, hg)
	if got.status != "exit 2" || !strings.Contains(string(got.stderr), supp+":1:") || len(got.stdout) != 0 {
		t.Errorf("bad suppressions: %s, stdout %q, stderr:\n%s", got.status, got.stdout, got.stderr)
	}
}

// checkJSONReport reads a json_path file back: one report, of two threads'
// accesses to score_total, one of them a write, on the race's line.
func checkJSONReport(t *testing.T, path string, line int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var reps []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		var r map[string]any
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		reps = append(reps, r)
	}
	if len(reps) != 1 {
		t.Fatalf("%d reports in %s, want 1", len(reps), path)
	}
	r := reps[0]
	loc, _ := r["location"].(map[string]any)
	acc, _ := r["accesses"].([]any)
	if r["kind"] != "data race" || loc["name"] != "score_total" || len(acc) != 2 {
		t.Fatalf("report %v: want a data race on score_total with two accesses", r)
	}
	a, b := acc[0].(map[string]any), acc[1].(map[string]any)
	writes := func(x map[string]any) bool { return x["kind"] == "write" || x["kind"] == "read-write" }
	if a["thread"] == b["thread"] || !writes(a) && !writes(b) {
		t.Errorf("accesses %v and %v: want two threads, one write", a, b)
	}
	for _, x := range []map[string]any{a, b} {
		top := x["stack"].([]any)[0].(map[string]any)
		if top["function"] != "add_score" || top["line"] != float64(line) {
			t.Errorf("access frame %v: want add_score at line %d", top, line)
		}
	}
}

func checkSARIF(t *testing.T, path string, line int) {
	t.Helper()
	log := sarifcheck.File(t, path)
	res := log["runs"].([]any)[0].(map[string]any)["results"].([]any)
	if len(res) != 1 {
		t.Fatalf("%d SARIF results, want 1", len(res))
	}
	pl := res[0].(map[string]any)["locations"].([]any)[0].(map[string]any)["physicalLocation"].(map[string]any)
	uri := pl["artifactLocation"].(map[string]any)["uri"].(string)
	if !strings.HasSuffix(uri, "scores.c") || pl["region"].(map[string]any)["startLine"] != float64(line) {
		t.Errorf("SARIF location %v, want scores.c:%d", pl, line)
	}
}

// halt_on_error ends the program at its first report, with the summary.
func TestHaltOnErrorSummary(t *testing.T) {
	hg, _ := reportProgram(t, "scores", "-O0")
	got := runProg(t, []string{"HG_OPTIONS=halt_on_error=1"}, hg)
	rep := string(got.stderr)
	if got.status != "exit 66" || !strings.Contains(rep, "data race") ||
		!strings.HasSuffix(rep, "==================\nSUMMARY: hgrewrite: 1 data race(s) reported in scores.hg\n") {
		t.Errorf("%s:\n%s", got.status, rep)
	}
	if strings.Contains(string(got.stdout), "logged") {
		t.Errorf("the program went on after the report: %s", got.stdout)
	}
}

// The previous access's callers come from its thread's call trace, which
// does not say where among the thread's calls the access was made: where
// the trace cannot tell (the call was pushed out of the trace; the
// function was called from two places), the report shows the access
// without callers rather than guess, and with them where it can
// (testdata/reports/callers.c).
func TestReportCallersNotGuessed(t *testing.T) {
	for _, opt := range []string{"-O0", "-O2"} {
		t.Run(opt, func(t *testing.T) {
			hg, lines := reportProgram(t, "callers", opt)
			got := runProg(t, nil, hg)
			rep := string(got.stderr)
			if got.status != "exit 66" {
				t.Fatalf("status %s, want exit 66:\n%s", got.status, rep)
			}
			previous := func(v, writer, fn, mark string) *regexp.Regexp {
				return regexp.MustCompile(`  Read of size 8 at 0x[0-9a-f]+ by thread T0:\n    #0 main [^\n]*\n` +
					`  Previous write of size 8 by thread ` + writer + `:\n    #0 ` +
					regexp.QuoteMeta(fmt.Sprintf("%s callers.c:%d ", fn, lines[mark])) + `[^\n]*\n((    #\d+ [^\n]*\n)*)` +
					`  Location is global '` + v + `'`)
			}
			for _, c := range []struct{ v, writer string }{{"old_var", "T1"}, {"two_var", "T2"}} {
				m := previous(c.v, c.writer, "put", "PUT").FindStringSubmatch(rep)
				if m == nil {
					t.Errorf("no report of %s against put's write by %s:\n%s", c.v, c.writer, rep)
				} else if m[1] != "" {
					t.Errorf("%s: the previous access's callers are guessed:\n%s", c.v, m[1])
				}
			}
			m := previous("one_var", "T2", "set_once", "ONCE").FindStringSubmatch(rep)
			want := regexp.MustCompile(`^    #1 only_caller ` + regexp.QuoteMeta(fmt.Sprintf("callers.c:%d ", lines["ONLY"])) +
				`[^\n]*\n    #2 twofold ` + regexp.QuoteMeta(fmt.Sprintf("callers.c:%d ", lines["SINGLE"])) + `[^\n]*\n$`)
			if m == nil || !want.MatchString(m[1]) {
				t.Errorf("one_var: the previous access's callers are not only_caller <- twofold:\n%s", rep)
			}
			m = previous("relay_var", "T3", "relay_handler", "RELAY").FindStringSubmatch(rep)
			want = regexp.MustCompile(`^    #1 dispatch ` + regexp.QuoteMeta(fmt.Sprintf("callers.c:%d ", lines["DISPATCH"])) +
				`[^\n]*\n    #2 relay ` + regexp.QuoteMeta(fmt.Sprintf("callers.c:%d ", lines["RELAYED"])) + `[^\n]*\n$`)
			if m == nil || !want.MatchString(m[1]) {
				t.Errorf("relay_var: the previous access's callers are not dispatch <- relay:\n%s", rep)
			}
		})
	}
}

// A pair of racing instructions reached through other call stacks is
// another race, reported again, as ThreadSanitizer does: one counter
// function bumps two counters, each from two paths
// (testdata/reports/twostacks.c).
func TestReportPerStackPair(t *testing.T) {
	for _, opt := range []string{"-O0", "-O2"} {
		t.Run(opt, func(t *testing.T) {
			hg, lines := reportProgram(t, "twostacks", opt)
			line := lines["BUMP"]
			got := runProg(t, nil, hg)
			rep := string(got.stderr)
			for _, c := range []struct{ v, cur, prev string }{{"sent", "retry_path", "send_path"}, {"received", "drain_path", "recv_path"}} {
				re := regexp.MustCompile(`by thread T\d+:\n    #0 bump ` + regexp.QuoteMeta(fmt.Sprintf("twostacks.c:%d ", line)) +
					`[^\n]*\n    #1 ` + c.cur + ` [^\n]*\n(    #\d+ [^\n]*\n)*  Previous (write|read-write) of size 8 by thread T\d+:\n    #0 bump [^\n]*\n    #1 ` +
					c.prev + ` [^\n]*\n(    #\d+ [^\n]*\n)*  Location is global '` + c.v + `'`)
				if !re.MatchString(rep) {
					t.Errorf("no report of %s between %s and %s:\n%s", c.v, c.cur, c.prev, rep)
				}
			}
			if !strings.Contains(rep, "SUMMARY: hgrewrite: 2 data race(s) reported in twostacks.hg\n") || got.status != "exit 66" {
				t.Errorf("status %s, want exit 66 and 2 races:\n%s", got.status, rep)
			}
		})
	}
}
