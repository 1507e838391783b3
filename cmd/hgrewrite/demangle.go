package main

import (
	"os/exec"
	"regexp"
	"strings"
)

// The --list-loops listing names functions, callees and data by their
// symbols, which for C++ are mangled. They are demangled with binutils'
// c++filt, run once for all the names of a listing: a demangler of the
// whole Itanium C++ ABI is far larger than this command should carry, and
// the Go standard library and the chosen dependencies have none. Without
// c++filt (or when it fails) the names stay mangled.

// mangledRE matches an Itanium-mangled symbol standing as a word of its
// own (a clone suffix such as .constprop.0 included).
var mangledRE = regexp.MustCompile(`\b_Z[A-Za-z0-9_.$]+`)

// demangleText returns text with every mangled name replaced by its
// source form.
func demangleText(text string) string {
	var names []string
	seen := map[string]bool{}
	for _, n := range mangledRE.FindAllString(text, -1) {
		if !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return text
	}
	plain, ok := cxxfilt(names)
	if !ok {
		return text
	}
	return mangledRE.ReplaceAllStringFunc(text, func(n string) string { return plain[n] })
}

// cxxfilt demangles names with one run of c++filt, which reads one name
// per line and writes one line per name (the name itself when it is not
// a mangled name it knows).
func cxxfilt(names []string) (map[string]string, bool) {
	path, err := exec.LookPath("c++filt")
	if err != nil {
		return nil, false
	}
	cmd := exec.Command(path)
	cmd.Stdin = strings.NewReader(strings.Join(names, "\n") + "\n")
	out, err := cmd.Output()
	if err != nil {
		return nil, false
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(names) {
		return nil, false
	}
	plain := make(map[string]string, len(names))
	for i, n := range names {
		plain[n] = lines[i]
	}
	return plain, true
}
