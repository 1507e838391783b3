package loops_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"hgrewrite/elfrw"
	"hgrewrite/loops"
	"hgrewrite/rewrite"
)

// inputOf is the loop analysis's input over bin's graph, both built by
// the rewriter's pipeline (package rewrite), so that the tests analyse
// the graph that ships, atomic marks included.
func inputOf(bin *elfrw.Binary) loops.Input {
	g, _ := rewrite.Graph(bin)
	return rewrite.LoopInput(bin, g)
}

// prog is a compiled test program and its analysis.
type prog struct {
	name string
	bin  *elfrw.Binary
	in   loops.Input
	res  *loops.Result
}

var (
	progMu    sync.Mutex
	progCache = map[string]*prog{}
	progErr   = map[string]error{}
	tmpDir    string
)

func TestMain(m *testing.M) {
	d, err := os.MkdirTemp("", "loops-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	tmpDir = d
	code := m.Run()
	os.RemoveAll(d)
	os.Exit(code)
}

// compile builds testdata/src with the compiler its extension asks for at
// optimisation level opt ("-O0", "-O2"), analyses it, and caches the
// result for the other tests. It skips the test without a compiler.
func compile(t *testing.T, src, opt string) *prog {
	t.Helper()
	cc := "gcc"
	if strings.HasSuffix(src, ".cpp") {
		cc = "g++"
	}
	if _, err := exec.LookPath(cc); err != nil {
		t.Skipf("%s not found", cc)
	}
	key := src + opt
	progMu.Lock()
	defer progMu.Unlock()
	if p, ok := progCache[key]; ok {
		return p
	}
	if err, ok := progErr[key]; ok {
		t.Fatal(err)
	}
	out := filepath.Join(tmpDir, strings.TrimSuffix(src, filepath.Ext(src))+opt)
	args := []string{opt, "-pthread", "-o", out, filepath.Join("testdata", src)}
	if cc == "g++" {
		args = append([]string{"-std=c++17"}, args...)
	}
	if b, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
		progErr[key] = fmt.Errorf("%s %s: %v\n%s", cc, strings.Join(args, " "), err, b)
		t.Fatal(progErr[key])
	}
	bin, err := elfrw.Open(out)
	if err != nil {
		progErr[key] = err
		t.Fatal(err)
	}
	in := inputOf(bin)
	p := &prog{name: key, bin: bin, in: in, res: loops.Analyze(in, loops.Options{})}
	progCache[key] = p
	return p
}

// sym returns the address of a symbol.
func (p *prog) sym(t *testing.T, name string) uint64 {
	t.Helper()
	for _, s := range p.bin.Symbols {
		if s.Name == name {
			return s.Addr
		}
	}
	t.Fatalf("%s: no symbol %s", p.name, name)
	return 0
}

// funcs returns the functions whose symbol is name, or, for C++, whose
// mangled name contains name as a source name (so that template instances
// made for a function's lambdas count as that function's).
func (p *prog) funcs(name string) []int {
	var out []int
	mangled := strconv.Itoa(len(name)) + name
	for fi, f := range p.in.Graph.Funcs {
		if f.Name == name || strings.HasPrefix(f.Name, "_Z") && strings.Contains(f.Name, mangled) {
			out = append(out, fi)
		}
	}
	return out
}

// loopsIn, waitsIn and spinsIn give the loops, wait loops and spinning
// loops found in the functions fis.
func (p *prog) loopsIn(fis []int) []int {
	var out []int
	for li, L := range p.res.Loops {
		if slices.Contains(fis, L.Func) {
			out = append(out, li)
		}
	}
	return out
}

func (p *prog) waitsIn(fis []int) []loops.WaitLoop {
	return slices.DeleteFunc(slices.Clone(p.res.Waits), func(w loops.WaitLoop) bool {
		return !slices.Contains(fis, p.res.Loops[w.Loop].Func)
	})
}

func (p *prog) spinsIn(fis []int) []loops.SpinLoop {
	return slices.DeleteFunc(slices.Clone(p.res.Spins), func(s loops.SpinLoop) bool {
		return !slices.Contains(fis, p.res.Loops[s.Loop].Func)
	})
}

// dump renders what was found in the named functions, for failure messages.
func (p *prog) dump(fis []int) string {
	var sb strings.Builder
	g := p.in.Graph
	sort.Ints(fis)
	for _, fi := range fis {
		fmt.Fprintf(&sb, "func %s 0x%x\n", g.Funcs[fi].Name, g.Funcs[fi].Start)
		for _, li := range p.loopsIn([]int{fi}) {
			L := p.res.Loops[li]
			fmt.Fprintf(&sb, "  loop %d header 0x%x blocks %d bytes %d depth %d parent %d exits", li, L.Header, len(L.Blocks), L.Bytes, L.Depth, L.Parent)
			for _, e := range L.Exits {
				fmt.Fprintf(&sb, " 0x%x->0x%x(%v)", g.Blocks[e.From].Start, e.To, e.Branch)
			}
			sb.WriteString("\n")
			if why, ok := p.res.Rejections[li]; ok {
				fmt.Fprintf(&sb, "    not spinning: %s\n", why)
			}
		}
		for _, w := range p.waitsIn([]int{fi}) {
			fmt.Fprintf(&sb, "  wait loop %d\n", w.Loop)
			for _, c := range w.Waits {
				fmt.Fprintf(&sb, "    0x%x %s\n      cv=%v %+v\n      mutex=%v %+v\n", c.Addr, c.Callee, c.CV, c.CV, c.Mutex, c.Mutex)
			}
		}
		for _, s := range p.spinsIn([]int{fi}) {
			fmt.Fprintf(&sb, "  spin loop %d loads %x conds %q consts %x\n", s.Loop, s.Loads, s.Conds, s.Consts)
		}
	}
	return sb.String()
}
