package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
)

// The verdict tests run the race corpus in testdata/races: every racy
// program must exit 66 with a report naming the racy variable, every
// race-free program must keep its own exit status and print no report.
// Cases known to fail in a configuration are listed in
// testdata/races/xfail.txt with a class and a reason (see xfailClass); they
// stay in the suite. A by-design case must fail: when it starts passing the
// test fails until its entry is removed.
// HG_WRITE_VERDICTS=1 rewrites docs/verdicts.md from the results.

type raceProg struct {
	path    string
	name    string
	race    bool
	racy    []string // global names, or heap:<func>
	needs   string
	exit    string
	comment string
}

var (
	verdictRE = regexp.MustCompile(`verdict:\s*(race-free|race)`)
	racyRE    = regexp.MustCompile(`racy:\s*([^\n*]+)`)
	needsRE   = regexp.MustCompile(`needs:\s*([a-z, |]+)`)
)

func raceCorpus(t *testing.T) []raceProg {
	var out []raceProg
	for _, pat := range []string{"*.c", "*.cpp"} {
		m, _ := filepath.Glob(filepath.Join(repoRoot(t), "testdata", "races", pat))
		for _, p := range m {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			head := string(b)
			if i := strings.Index(head, "*/"); i > 0 {
				head = head[:i]
			}
			v := verdictRE.FindStringSubmatch(head)
			if v == nil {
				t.Fatalf("%s: no verdict line", p)
			}
			rp := raceProg{path: p, name: strings.TrimSuffix(filepath.Base(p), filepath.Ext(p)), race: v[1] == "race",
				exit: expectedStatus(t, p)}
			if m := racyRE.FindStringSubmatch(head); m != nil {
				for _, f := range strings.Fields(strings.ReplaceAll(m[1], ",", " ")) {
					if !strings.HasPrefix(f, "(") {
						rp.racy = append(rp.racy, f)
					} else {
						break
					}
				}
			}
			if m := needsRE.FindStringSubmatch(head); m != nil {
				rp.needs = strings.TrimSpace(m[1])
			}
			out = append(out, rp)
		}
	}
	if len(out) == 0 {
		t.Skip("no programs in testdata/races")
	}
	return out
}

type verdictConfig struct {
	name string
	opt  string // -O0, -O2
	env  string // HG_OPTIONS
}

var verdictConfigs = []verdictConfig{
	{"short-O0", "-O0", "msm=short"},
	{"short-O2", "-O2", "msm=short"},
	{"long-O2", "-O2", "msm=long"},
	{"nolib-O2", "-O2", "msm=short lib=no"},
	{"lsd=yes-O2", "-O2", "msm=short lsd=yes"},
	{"lsd=no-O2", "-O2", "msm=short lsd=no"},
	{"spin=no-O2", "-O2", "msm=short spin=no"},
	{"handoff=no-O2", "-O2", "msm=short handoff=no"},
}

// xfailClass says what a listed case's outcome may be.
type xfailClass string

const (
	// byDesign: the detector's design makes this verdict wrong (lib=no,
	// lsd=no, spin=no, the hybrid's lack of happens-before from locks, what
	// a binary cannot tell apart). It must fail in every run.
	byDesign xfailClass = "by-design"
	// flaky: the program's own synchronisation depends on the schedule
	// (a signal that is lost in some runs and not in others), and so does
	// the right verdict for the configuration. Either outcome is accepted.
	flaky xfailClass = "flaky"
	// orderBug: a detector bug, not a feature of the program: the verdict
	// depends on the order in which the detector processes two unordered
	// accesses (one previous access per cell, dissertation section 5.3).
	// Either outcome is accepted until the bug is fixed; each such entry
	// is a defect to remove.
	orderBug xfailClass = "order-bug"
	// bug: another known detector bug: either outcome is accepted; each
	// such entry is a defect to remove.
	bug xfailClass = "bug"
)

// xfail is one entry of xfail.txt.
type xfail struct {
	class  xfailClass
	reason string
}

// xfails reads testdata/races/xfail.txt: "program config class: reason",
// where config may be * for all configurations (see xfailOf).
func xfails(t *testing.T) map[string]xfail {
	f, err := os.Open(filepath.Join(repoRoot(t), "testdata", "races", "xfail.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]xfail{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.SplitN(line, " ", 3)
		if len(parts) < 3 {
			t.Fatalf("xfail.txt: bad line %q", line)
		}
		class, reason, ok := strings.Cut(parts[2], ": ")
		switch xfailClass(class) {
		case byDesign, flaky, orderBug, bug:
		default:
			ok = false
		}
		if !ok {
			t.Fatalf("xfail.txt: %q: the reason must start with by-design:, flaky:, order-bug: or bug:", line)
		}
		key := parts[0] + " " + parts[1]
		if _, dup := out[key]; dup {
			t.Fatalf("xfail.txt: %s is listed twice", key)
		}
		out[key] = xfail{xfailClass(class), reason}
	}
	return out
}

// checkXfails rejects entries that name no program of the corpus or no
// configuration: a typo would otherwise list nothing.
func checkXfails(t *testing.T, x map[string]xfail, progs []raceProg) {
	names := map[string]bool{}
	for _, p := range progs {
		names[p.name] = true
	}
	configs := map[string]bool{"*": true}
	for _, c := range verdictConfigs {
		configs[c.name] = true
	}
	for key := range x {
		prog, cfg, _ := strings.Cut(key, " ")
		if !names[prog] || !configs[cfg] {
			t.Errorf("xfail.txt: %q names no program of testdata/races or no configuration", key)
		}
	}
}

// xfailOf finds the entry for a program in a configuration.
func xfailOf(x map[string]xfail, prog, cfg string) (xfail, bool) {
	if r, ok := x[prog+" "+cfg]; ok {
		return r, true
	}
	r, ok := x[prog+" *"]
	return r, ok
}

var reportRE = regexp.MustCompile(`Location is global '([^']+)'`)

// heapReportRE matches a report's heap location and names its
// allocating function.
var heapReportRE = regexp.MustCompile(`Location is heap block .*allocated by thread T\d+ at:\n    #0 ([^ +(]+)`)

// heapSiteRE matches a report's heap location allocated in function f.
func heapSiteRE(f string) *regexp.Regexp {
	return regexp.MustCompile(`Location is heap block .*allocated by thread T\d+ at:\n    #0 ` + regexp.QuoteMeta(f) + `\b`)
}

// verdictOf runs a rewritten program and says what the detector concluded.
func verdictOf(t *testing.T, p raceProg, hg, env string) (race bool, named []string, status string, out outcome) {
	out = runProg(t, []string{"HG_OPTIONS=" + env}, hg)
	race = strings.Contains(string(out.stderr), "WARNING: hgrewrite: data race")
	for _, m := range reportRE.FindAllStringSubmatch(string(out.stderr), -1) {
		named = append(named, m[1])
	}
	for _, m := range heapReportRE.FindAllStringSubmatch(string(out.stderr), -1) {
		named = append(named, "heap:"+m[1])
	}
	return race, named, out.status, out
}

func TestVerdicts(t *testing.T) {
	progs := raceCorpus(t)
	xfs := xfails(t)
	checkXfails(t, xfs, progs)
	var mu sync.Mutex
	results := map[string]map[string]verdictCell{} // prog -> config -> outcome
	for _, p := range progs {
		p := p
		results[p.name] = map[string]verdictCell{}
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			for _, c := range verdictConfigs {
				_, hg := built(t, p.path, variant{opt: c.opt, pie: true})
				race, named, st, out := verdictOf(t, p, hg, c.env)
				ok, why := judge(p, race, named, st, string(out.stderr))
				cell := "ok"
				if !ok {
					cell = "FAIL: " + why
				}
				xf, listed := xfailOf(xfs, p.name, c.name)
				switch {
				case ok && listed && xf.class == byDesign:
					t.Errorf("%s: passes but is listed in xfail.txt as by-design (%s): remove the entry", c.name, xf.reason)
				case !ok && listed:
					cell = "xfail: " + why
					t.Logf("%s: expected failure: %s (%s: %s)", c.name, why, xf.class, xf.reason)
				case !ok:
					t.Errorf("%s: %s\nstderr:\n%s", c.name, why, clip(out.stderr))
				}
				mu.Lock()
				results[p.name][c.name] = verdictCell{cell, xf, listed && !ok}
				mu.Unlock()
			}
		})
	}
	t.Cleanup(func() {
		if os.Getenv("HG_WRITE_VERDICTS") != "" {
			writeVerdictTable(t, progs, results)
		}
	})
}

var (
	currentRE  = regexp.MustCompile(`(?m)^  (Read|Write|Read-write|Free|Atomic[a-z -]*) of size \d+ at 0x[0-9a-f]+ by thread T(\d+):`)
	previousRE = regexp.MustCompile(`(?m)^  Previous (read|write|read-write|free|atomic[a-z -]*) of size \d+ by thread T(\d+):`)
)

// badPair says what is wrong with a report whose two accesses do not
// conflict: the same thread twice, two reads, or no previous access.
func badPair(stderr string) string {
	for _, rep := range strings.Split(stderr, "WARNING: hgrewrite: data race")[1:] {
		cur, prev := currentRE.FindStringSubmatch(rep), previousRE.FindStringSubmatch(rep)
		switch {
		case cur == nil || prev == nil:
			return "a report without both accesses"
		case cur[2] == prev[2]:
			return "a report pairs T" + cur[2] + " with itself"
		case strings.EqualFold(cur[1], "read") && strings.EqualFold(prev[1], "read"):
			return "a report pairs two reads"
		}
	}
	return ""
}

// judge compares an outcome with the program's declared verdict.
func judge(p raceProg, race bool, named []string, status, stderr string) (bool, string) {
	if i := strings.Index(stderr, "internal error"); i >= 0 {
		line, _, _ := strings.Cut(stderr[i:], "\n")
		return false, line // a check of the runtime's own (lockview.c) failed
	}
	if !p.race {
		switch {
		case race:
			return false, fmt.Sprintf("false positive on %v", named)
		case status != p.exit:
			return false, fmt.Sprintf("status %s, want %s", status, p.exit)
		}
		return true, ""
	}
	if !race {
		return false, "race missed"
	}
	if status != "exit 66" {
		return false, fmt.Sprintf("status %s, want exit 66", status)
	}
	if bad := badPair(stderr); bad != "" {
		return false, bad
	}
	for _, want := range p.racy {
		if f, ok := strings.CutPrefix(want, "heap:"); ok {
			if !heapSiteRE(f).MatchString(stderr) {
				return false, fmt.Sprintf("no report names a heap block allocated in %s", f)
			}
			continue
		}
		found := false
		for _, n := range named {
			if n == want {
				found = true
			}
		}
		if !found {
			return false, fmt.Sprintf("report names %v, not %s", named, want)
		}
	}
	for _, n := range named {
		listed := false
		for _, want := range p.racy {
			if n == want {
				listed = true
			}
		}
		if !listed {
			return false, fmt.Sprintf("also reports %s, which is not racy", n)
		}
	}
	return true, ""
}

// repeatRuns is how often TestVerdictsRepeat runs each program.
const repeatRuns = 20

// TestVerdictsRepeat runs every program of the corpus 20 times with the
// default options at -O0 and -O2: a verdict must not depend on the
// schedule unless the program's own synchronisation does. Every run must
// be right, except for cases listed flaky or order-bug in xfail.txt
// (either outcome), and a by-design case must be wrong in every run.
func TestVerdictsRepeat(t *testing.T) {
	progs := raceCorpus(t)
	xfs := xfails(t)
	for _, p := range progs {
		p := p
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			for _, c := range verdictConfigs[:2] { // short-O0, short-O2: the defaults
				_, hg := built(t, p.path, variant{opt: c.opt, pie: true})
				xf, listed := xfailOf(xfs, p.name, c.name)
				wrong := 0
				for run := 0; run < repeatRuns; run++ {
					race, named, st, out := verdictOf(t, p, hg, c.env)
					ok, why := judge(p, race, named, st, string(out.stderr))
					switch {
					case !ok && !listed:
						t.Fatalf("%s run %d: %s\nstderr:\n%s", c.name, run+1, why, clip(out.stderr))
					case !ok:
						wrong++
					}
				}
				if listed && xf.class == byDesign && wrong != repeatRuns {
					t.Errorf("%s: by-design failure right in %d of %d runs", c.name, repeatRuns-wrong, repeatRuns)
				}
			}
		})
	}
}

// verdictCell is one cell of the verdict table.
type verdictCell struct {
	cell   string // "ok", "xfail: why" or "FAIL: why"
	xf     xfail  // the entry that covers the cell, if any
	listed bool   // the cell failed and xf covers it
}

func writeVerdictTable(t *testing.T, progs []raceProg, results map[string]map[string]verdictCell) {
	sort.Slice(progs, func(i, j int) bool { return progs[i].name < progs[j].name })
	var b strings.Builder
	b.WriteString("# Verdicts on the race corpus\n\n")
	b.WriteString("Generated by `HG_WRITE_VERDICTS=1 go test -run TestVerdicts ./cmd/hgrewrite/` from testdata/races.\n")
	b.WriteString("Each cell: `ok`, or why the verdict is wrong; `xfail` marks known failures listed in testdata/races/xfail.txt, ")
	b.WriteString("with a footnote giving the entry's class and reason (by-design: always fails; flaky: the program's own ")
	b.WriteString("synchronisation depends on the schedule; order-bug: a detector bug, the verdict depends on the order in which ")
	b.WriteString("unordered accesses are processed; bug: another known detector bug).\n\n")
	b.WriteString("| program | verdict | needs |")
	for _, c := range verdictConfigs {
		b.WriteString(" " + c.name + " |")
	}
	b.WriteString("\n|---|---|---|")
	for range verdictConfigs {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	pass := map[string]int{}
	var notes []xfail
	noteOf := map[xfail]int{}
	for _, p := range progs {
		v := "race-free"
		if p.race {
			v = "race: " + strings.Join(p.racy, ", ")
		}
		fmt.Fprintf(&b, "| %s | %s | %s |", p.name, v, p.needs)
		for _, c := range verdictConfigs {
			r := results[p.name][c.name]
			if r.cell == "ok" {
				pass[c.name]++
			}
			b.WriteString(" " + r.cell)
			if r.listed {
				if noteOf[r.xf] == 0 {
					notes = append(notes, r.xf)
					noteOf[r.xf] = len(notes)
				}
				fmt.Fprintf(&b, " [^%d]", noteOf[r.xf])
			}
			b.WriteString(" |")
		}
		b.WriteString("\n")
	}
	b.WriteString("\n| configuration | correct verdicts |\n|---|---|\n")
	for _, c := range verdictConfigs {
		fmt.Fprintf(&b, "| %s (HG_OPTIONS=\"%s\", %s) | %d of %d |\n", c.name, c.env, c.opt, pass[c.name], len(progs))
	}
	b.WriteString("\n")
	for i, n := range notes {
		fmt.Fprintf(&b, "[^%d]: %s: %s\n", i+1, n.class, n.reason)
	}
	path := filepath.Join(repoRoot(t), "docs", "verdicts.md")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Error(err)
	}
}

// TestStress is the detection runtime's stress test: 8 threads, more than
// 10^7 checked accesses and 16,000 lock operations complete and give the
// same verdict as a small run: one race, on stress_racy.
func TestStress(t *testing.T) {
	src := filepath.Join(repoRoot(t), "testdata", "stress", "stress.c")
	dir := t.TempDir()
	bin := compile(t, src, dir, variant{opt: "-O2", pie: true})
	rewriteOK(t, bin, bin+".hg")
	for _, rounds := range []string{"5", "2000"} {
		out := runProg(t, []string{"HG_OPTIONS=stats=1"}, bin+".hg", rounds)
		named := reportRE.FindAllStringSubmatch(string(out.stderr), -1)
		if out.status != "exit 66" || len(named) != 1 || named[0][1] != "stress_racy" {
			t.Errorf("rounds=%s: %s, reports %v; want exit 66 and one report on stress_racy\n%s", rounds, out.status, named, clip(out.stderr))
		}
		if c := accessCounts(out.stderr); rounds == "2000" && (len(c) != 1 || c[0] < 10_000_000) {
			t.Errorf("rounds=2000: %v accesses checked, want at least 10^7", c)
		}
	}
}

// TestMutexContention: sixteen threads on a default, an error-checking
// and a recursive mutex, on every CPU and on one, give the program's own
// output and exit status and no report: the runtime's own release of a
// default mutex (runtime/wrappers.c, hg_mutex_release) loses no
// increment and no wake-up, and leaves the other kinds to glibc.
func TestMutexContention(t *testing.T) {
	src := filepath.Join(repoRoot(t), "testdata", "stress", "mutex_contention.c")
	dir := t.TempDir()
	bin := compile(t, src, dir, variant{opt: "-O2", pie: true})
	rewriteOK(t, bin, bin+".hg")
	for _, args := range [][]string{nil, nil, {"one-cpu"}, {"one-cpu"}} {
		want := runProg(t, nil, bin, args...)
		if want.status != "exit 0" {
			t.Fatalf("native %v: %s\n%s", args, want.status, want.stdout)
		}
		got := runProg(t, nil, bin+".hg", args...)
		compareRuns(t, want, got)
		if strings.Contains(string(got.stderr), "WARNING") {
			t.Errorf("%v: false report:\n%s", args, clip(got.stderr))
		}
	}
}

// TestManyThreadsBigHeap: 3,000 short threads and a 64 MiB block written
// by two threads complete, with the program's output and no report.
func TestManyThreadsBigHeap(t *testing.T) {
	src := filepath.Join(repoRoot(t), "testdata", "stress", "big_and_many.c")
	dir := t.TempDir()
	bin := compile(t, src, dir, variant{opt: "-O2", pie: true})
	rewriteOK(t, bin, bin+".hg")
	want := runProg(t, nil, bin)
	got := runProg(t, nil, bin+".hg")
	compareRuns(t, want, got)
	if strings.Contains(string(got.stderr), "WARNING") {
		t.Errorf("false report:\n%s", clip(got.stderr))
	}
}

// TestMlockall: programs that lock their memory run as they do natively,
// with no report. mlockall.c locks all its memory, then allocates and
// frees blocks in two threads, then big sparse tables locked on fault
// (its watchdog kills it past 1 GB resident: mlockall(MCL_CURRENT) used to
// fault in the shadow's reservations until the OOM killer came, and the
// tables' resets stored into their locked shadow), with errno intact
// across malloc and free. mlock_future.c locks its future memory under a
// small RLIMIT_MEMLOCK and must get every allocation it asks for (the
// runtime's own mappings counted against the limit).
func TestMlockall(t *testing.T) {
	for _, name := range []string{"mlockall.c", "mlock_future.c"} {
		t.Run(strings.TrimSuffix(name, ".c"), func(t *testing.T) {
			src := filepath.Join(repoRoot(t), "testdata", "stress", name)
			dir := t.TempDir()
			bin := compile(t, src, dir, variant{opt: "-O2", pie: true})
			rewriteOK(t, bin, bin+".hg")
			want := runProg(t, nil, bin)
			if want.status != "exit 0" {
				t.Fatalf("native: %s\n%s", want.status, want.stdout)
			}
			got := runProg(t, nil, bin+".hg")
			compareRuns(t, want, got)
			if strings.Contains(string(got.stderr), "WARNING") {
				t.Errorf("false report:\n%s", clip(got.stderr))
			}
		})
	}
}

// TestReportStack: a report carries the racing thread's call stack,
// callers in order: the access's own (inner, called by middle, outer and
// worker) when inner is still running at its next interposed call, else
// the stack at that call (inner's call to unlock is a tail call at -O2,
// so inner's own frame may be gone).
func TestReportStack(t *testing.T) {
	src := filepath.Join(repoRoot(t), "testdata", "reports", "nested_stack.c")
	for _, opt := range []string{"-O0", "-O2"} {
		dir := t.TempDir()
		bin := compile(t, src, dir, variant{opt: opt, pie: true})
		rewriteOK(t, bin, bin+".hg")
		out := runProg(t, []string{"HG_OPTIONS=exitcode=0"}, bin+".hg")
		stderr := string(out.stderr)
		if !strings.Contains(stderr, "Location is global 'shared_total'") {
			t.Fatalf("%s: no report on shared_total:\n%s", opt, clip(out.stderr))
		}
		access := regexp.MustCompile(`(?m)^  [A-Z][a-z-]* of size \d+ at 0x[0-9a-f]+ by thread T\d+:\n((?:    #\d+ [^\n]*\n)+)`).FindStringSubmatch(stderr)
		stack := ""
		if access != nil && strings.Count(access[1], "\n") > 1 {
			stack = access[1]
		} else if i := strings.Index(stderr, "at its next synchronisation or library call"); i >= 0 {
			stack = stderr[i:]
			stack = stack[:strings.Index(stack, "==================")]
		}
		if opt == "-O0" && (access == nil || !strings.HasPrefix(access[1], "    #0 inner ")) {
			t.Errorf("%s: the access's stack does not start in inner:\n%s", opt, stderr)
		}
		last := -1
		for _, fn := range []string{"middle", "outer", "worker"} {
			p := strings.Index(stack, " "+fn+" ")
			if p < 0 || p < last {
				t.Errorf("%s: frame %s missing or out of order in:\n%s", opt, fn, stack)
			}
			last = p
		}
	}
}
