package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeSample: the sample report in README.md is what `make demo`
// prints, up to what changes from run to run (the pid, run-time
// addresses, and which of the two symmetric workers is T1). It runs
// examples/demo.sh itself, with the bin/ that `make test` builds first.
func TestReadmeSample(t *testing.T) {
	requireTool(t, "gcc")
	root := repoRoot(t)
	for _, f := range []string{"bin/hgrewrite", "bin/libhgrt.so"} {
		if _, err := os.Stat(filepath.Join(root, f)); err != nil {
			t.Skipf("%s not built (make test builds it first): %v", f, err)
		}
	}
	out, err := exec.Command(filepath.Join(root, "examples", "demo.sh")).CombinedOutput()
	if err != nil {
		t.Fatalf("examples/demo.sh: %v\n%s", err, out)
	}
	got := sampleReport(string(out))
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	want := sampleReport(string(readme))
	if got == "" || want == "" {
		t.Fatalf("no report in the demo's output (%q) or in README.md (%q)", got, want)
	}
	if normaliseReport(got) != normaliseReport(want) {
		t.Errorf("README.md's sample report is not what make demo prints; put this in README.md:\n%s", got)
	}
}

// sampleReport is the first report and its summary line in text.
var sampleRE = regexp.MustCompile(`(?s)==================\nWARNING: hgrewrite: .*?\nSUMMARY: [^\n]*\n`)

func sampleReport(text string) string { return sampleRE.FindString(text) }

// normaliseReport replaces what varies between runs: the pid, hexadecimal
// addresses and offsets, and the numbers of the non-main threads, which
// become the order of their first mention.
func normaliseReport(rep string) string {
	rep = regexp.MustCompile(`pid \d+`).ReplaceAllString(rep, "pid N")
	rep = regexp.MustCompile(`0x[0-9a-f]+`).ReplaceAllString(rep, "0x?")
	seen := map[string]string{}
	return regexp.MustCompile(`\bT[1-9]\d*\b`).ReplaceAllStringFunc(rep, func(id string) string {
		if _, ok := seen[id]; !ok {
			seen[id] = "T#" + strings.Repeat("'", len(seen))
		}
		return seen[id]
	})
}
