package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"testing"
	"time"

	"hgrewrite/elfrw"
	"hgrewrite/rewrite"
)

// TestUsrBin is requirement 2 of the rewriter: decoding and CFG
// construction succeed with no undecodable instruction in reachable code
// on every ELF executable in /usr/bin.
func TestUsrBin(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: not walking /usr/bin")
	}
	entries, err := os.ReadDir("/usr/bin")
	if err != nil || len(entries) == 0 {
		t.Skipf("/usr/bin is empty or unreadable (%v): nothing to walk", err)
	}
	type res struct {
		name             string
		insts, bad, size int
		took             time.Duration
	}
	var (
		mu      sync.Mutex
		results []res
		skipped = map[string]int{}
		wg      sync.WaitGroup
		jobs    = make(chan string)
	)
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for path := range jobs {
				start := time.Now()
				bin, err := elfrw.Open(path)
				if err != nil {
					var ee *elfrw.Error
					if !errors.As(err, &ee) {
						t.Errorf("%s: %v", path, err)
						continue
					}
					mu.Lock()
					skipped[ee.Msg]++
					mu.Unlock()
					continue
				}
				g, bad := rewrite.Graph(bin)
				n := 0
				for _, s := range g.Sections {
					n += len(s.Insts)
				}
				mu.Lock()
				results = append(results, res{filepath.Base(path), n, bad, len(bin.Data), time.Since(start)})
				mu.Unlock()
			}
		}()
	}
	seen := map[string]bool{}
	for _, e := range entries {
		path := filepath.Join("/usr/bin", e.Name())
		real, err := filepath.EvalSymlinks(path)
		if err != nil || seen[real] {
			continue
		}
		seen[real] = true
		if st, err := os.Stat(real); err != nil || !st.Mode().IsRegular() {
			continue
		}
		jobs <- real
	}
	close(jobs)
	wg.Wait()
	sort.Slice(results, func(i, j int) bool { return results[i].size > results[j].size })
	total, totalBad := 0, 0
	for _, r := range results {
		total += r.insts
		totalBad += r.bad
		if r.bad > 0 {
			t.Errorf("%s: %d undecodable instructions in reachable code", r.name, r.bad)
		}
	}
	t.Logf("%d executables analysed, %d instructions, %d undecodable; not analysed: %v", len(results), total, totalBad, skipped)
	if len(results) > 0 {
		t.Logf("largest: %s (%d bytes, %d instructions) in %v", results[0].name, results[0].size, results[0].insts, results[0].took)
	}
}

// debianProgram is a real multithreaded (or at least real) program from a
// Debian package, with a command whose output must not change.
type debianProgram struct {
	bin  string
	args func(dir string) []string
}

// TestDebianPrograms is requirement 3 of the rewriter: real programs from
// Debian packages, rewritten, produce byte-identical output on real inputs.
func TestDebianPrograms(t *testing.T) {
	dir := t.TempDir()
	input := filepath.Join(dir, "input.txt")
	var buf bytes.Buffer
	for i := 0; i < 300000; i++ {
		buf.WriteString("line ")
		buf.WriteString(itoa(i * 7919 % 100003))
		buf.WriteString(" of the test input\n")
	}
	os.WriteFile(input, buf.Bytes(), 0o644)
	progs := []debianProgram{
		{"pigz", func(d string) []string { return []string{"-p", "2", "-c", input} }},
		{"xz", func(d string) []string { return []string{"-T2", "-c", input} }},
		{"zstd", func(d string) []string { return []string{"-T2", "-c", "-q", input} }},
		{"sort", func(d string) []string { return []string{"--parallel=2", "-S", "1M", input} }},
		{"gzip", func(d string) []string { return []string{"-c", input} }},
		{"bzip2", func(d string) []string { return []string{"-c", input} }},
		{"sed", func(d string) []string { return []string{"s/of the/OF THE/", input} }},
		{"grep", func(d string) []string { return []string{"-c", "99", input} }},
		{"/usr/bin/python3", func(d string) []string {
			return []string{"-c", `import sys, threading, collections
c = collections.Counter()
def work(lines):
    for l in lines: c[l.split()[1][-1]] += 1
lines = open(sys.argv[1]).read().splitlines()
ts = [threading.Thread(target=work, args=(lines[i::2],)) for i in range(2)]
[t.start() for t in ts]; [t.join() for t in ts]
print(sorted(c.items()))`, input}
		}},
		{"perl", func(d string) []string {
			return []string{"-e", `my %h; while (<>) { my @w = split; $h{$w[1]}++ } print scalar(keys %h), "\n"`, input}
		}},
	}
	ran := 0
	for _, p := range progs {
		path, err := exec.LookPath(p.bin)
		if err != nil {
			t.Logf("%s not installed: skipped (.ci/check-tools installs it)", p.bin)
			continue
		}
		t.Run(filepath.Base(p.bin), func(t *testing.T) {
			hg := filepath.Join(dir, filepath.Base(p.bin)+".hg")
			rewriteOK(t, path, hg)
			want := runProg(t, nil, path, p.args(dir)...)
			got := runProg(t, []string{"HG_OPTIONS=stats=1 exitcode=0"}, hg, p.args(dir)...)
			compareRuns(t, want, got)
			if c := accessCounts(got.stderr); len(c) == 0 || c[0] == 0 {
				t.Errorf("no accesses counted: %s", got.stderr)
			}
		})
		ran++
	}
	if ran == 0 {
		t.Skip("none of the Debian programs is installed")
	}
}

func itoa(i int) string {
	var b [20]byte
	n := len(b)
	for {
		n--
		b[n] = byte('0' + i%10)
		i /= 10
		if i == 0 {
			return string(b[n:])
		}
	}
}
