package loops_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"hgrewrite/elfrw"
	"hgrewrite/loops"
)

// TestDump prints everything found in the test programs (HG_LOOPS_DUMP=1).
func TestDump(t *testing.T) {
	if os.Getenv("HG_LOOPS_DUMP") == "" {
		t.Skip("set HG_LOOPS_DUMP=1")
	}
	for _, src := range []string{"wait.c", "spin.c", "cv_wait_pred.cpp"} {
		for _, opt := range []string{"-O0", "-O2"} {
			p := compile(t, src, opt)
			var fis []int
			for fi, f := range p.in.Graph.Funcs {
				if len(p.loopsIn([]int{fi})) > 0 && !strings.HasPrefix(f.Name, "_start") {
					fis = append(fis, fi)
				}
			}
			t.Logf("==== %s %s stats %+v\n%s", src, opt, p.res.Stats, p.dump(fis))
		}
	}
}

// TestBig times Analyze on a large binary (HG_LOOPS_BIG=1 for
// /usr/bin/node, or HG_LOOPS_BIG=/path/to/binary).
func TestBig(t *testing.T) {
	path := os.Getenv("HG_LOOPS_BIG")
	if path == "" {
		t.Skip("set HG_LOOPS_BIG=1 or a path")
	}
	if path == "1" {
		path = "/usr/bin/node"
	}
	start := time.Now()
	bin, err := elfrw.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	in := inputOf(bin)
	built := time.Now()
	res := loops.Analyze(in, loops.Options{})
	done := time.Now()
	t.Logf("%s: %d blocks, %d funcs; graph %v, Analyze %v; %+v", path, len(in.Graph.Blocks), len(in.Graph.Funcs),
		built.Sub(start), done.Sub(built), res.Stats)
	largest := 0
	for _, f := range in.Graph.Funcs {
		if len(f.Blocks) > largest {
			largest = len(f.Blocks)
		}
	}
	reasons := map[string]int{}
	for _, why := range res.Rejections {
		if i := strings.IndexAny(why, "0123456789"); i > 0 {
			why = why[:i]
		}
		reasons[why]++
	}
	t.Logf("largest function: %d blocks; waits: %d; rejection reasons: %v", largest, len(res.Waits), reasons)
	if os.Getenv("HG_LOOPS_REASONS") != "" {
		for li, why := range res.Rejections {
			if strings.Contains(why, os.Getenv("HG_LOOPS_REASONS")) {
				L := res.Loops[li]
				t.Logf("rejected %d in %s at 0x%x: %s", li, in.Graph.Funcs[L.Func].Name, L.Header, why)
			}
		}
	}
	for _, sp := range res.Spins {
		L := res.Loops[sp.Loop]
		t.Logf("spin loop %d in %s at 0x%x: %d blocks, conds %q", sp.Loop, in.Graph.Funcs[L.Func].Name, L.Header, len(L.Blocks), sp.Conds)
	}
	for i, w := range res.Waits {
		if i < 15 {
			t.Logf("wait loop %d in %s: %d blocks, %d waits, first %s cv=%v mutex=%v", w.Loop, in.Graph.Funcs[res.Loops[w.Loop].Func].Name,
				len(res.Loops[w.Loop].Blocks), len(w.Waits), w.Waits[0].Callee, w.Waits[0].CV, w.Waits[0].Mutex)
		}
	}
}
