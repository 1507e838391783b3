package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// demangleText replaces every mangled name, however often it appears,
// and leaves other names (and names with _Z inside a word) alone; without
// c++filt the text is unchanged.
func TestDemangleText(t *testing.T) {
	requireTool(t, "c++filt")
	in := "wait loop in _ZN2ns3fooEv (0x10):\n  wait _ZN2ns3fooEv at 0x12, in func_401000 and foo_Zbar, data _ZL5countB.constprop.0+8\n"
	want := "wait loop in ns::foo() (0x10):\n  wait ns::foo() at 0x12, in func_401000 and foo_Zbar, data _ZL5countB.constprop.0+8\n"
	// _ZL5countB.constprop.0 is not a valid mangling: c++filt gives it back
	if got := demangleText(in); got != want {
		t.Errorf("demangleText:\n got %q\nwant %q", got, want)
	}
	t.Setenv("PATH", t.TempDir())
	if got := demangleText(in); got != in {
		t.Errorf("without c++filt: %q, want the text unchanged", got)
	}
}

// --list-loops names a C++ program's functions and callees in source form.
func TestListLoopsDemangled(t *testing.T) {
	requireTool(t, "c++filt")
	src := filepath.Join(repoRoot(t), "testdata", "races", "cxx_cv_predicate.cpp")
	bin, _ := built(t, src, variant{opt: "-O0", pie: true})
	code, out, errOut := hgrewrite(t, "--list-loops", bin)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "  wait std::condition_variable::wait(std::unique_lock<std::mutex>&) at ") ||
		!strings.Contains(out, "wait loop in void std::condition_variable::wait<") {
		t.Errorf("no demangled wait loop in:\n%s", out)
	}
	if m := regexp.MustCompile(`\b_Z\w+`).FindString(out); m != "" {
		t.Errorf("%s is still mangled in:\n%s", m, out)
	}
}
