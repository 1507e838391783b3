package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// Test binaries. Several tests run the same program in the same variant
// (the race corpus: TestVerdicts, TestVerdictsRepeat and TestListLoops at
// -O0 and -O2), and a stripped variant differs from its unstripped twin
// only by strip's pass. Each (program, variant) is compiled and rewritten
// once per test binary (built), in one directory that TestMain removes.

func TestMain(m *testing.M) {
	code := m.Run()
	if dir, err := buildDir(); err == nil {
		os.RemoveAll(dir)
	}
	if rtPath != "" {
		os.RemoveAll(filepath.Dir(rtPath))
	}
	os.Exit(code)
}

var buildDir = sync.OnceValues(func() (string, error) { return os.MkdirTemp("", "hgrewrite-builds") })

type buildKey struct {
	src string
	v   variant
}

// build is one program compiled in one variant (bin) and rewritten with
// the default options (hg), or why it could not be.
type build struct {
	once    sync.Once
	bin, hg string
	err     error
}

var builds sync.Map // buildKey -> *build

// built is src compiled in variant v and its rewrite. The binaries are
// shared: a test must not change them.
func built(t testing.TB, src string, v variant) (bin, hg string) {
	t.Helper()
	requireTool(t, compilerOf(src))
	b := cachedBuild(src, v, runtimeLib(t))
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.bin, b.hg
}

// cachedBuild is the build of src in variant v, made by the first caller.
// Nothing in it may stop the goroutine (t.Fatal, t.Skip): the build would
// be left empty for every later caller.
func cachedBuild(src string, v variant, lib string) *build {
	e, _ := builds.LoadOrStore(buildKey{src, v}, new(build))
	b := e.(*build)
	b.once.Do(func() { b.bin, b.hg, b.err = makeBuild(src, v, lib) })
	return b
}

// makeBuild compiles (or, for a stripped variant, strips a copy of the
// unstripped build) and rewrites.
func makeBuild(src string, v variant, lib string) (bin, hg string, err error) {
	dir, err := buildDir()
	if err != nil {
		return "", "", err
	}
	bin = binaryPath(dir, src, v)
	if v.strip {
		plain := v
		plain.strip = false
		from := cachedBuild(src, plain, lib)
		if from.err != nil {
			return "", "", from.err
		}
		if err := stripCopy(from.bin, bin); err != nil {
			return "", "", err
		}
	} else if err := compileTo(src, bin, v); err != nil {
		return "", "", err
	}
	hg = bin + ".hg"
	var out, errb bytes.Buffer
	if code := run([]string{"--runtime", lib, bin, "-o", hg}, &out, &errb); code != 0 {
		return "", "", fmt.Errorf("hgrewrite %s: exit %d: %s", bin, code, errb.String())
	}
	return bin, hg, nil
}

func stripCopy(from, to string) error {
	if b, err := exec.Command("strip", "-o", to, from).CombinedOutput(); err != nil {
		return fmt.Errorf("strip %s: %v\n%s", from, err, b)
	}
	return nil
}
