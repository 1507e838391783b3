package detect

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"hgrewrite/runtime/detect/sarifcheck"
)

// racesInFiles runs the two races of TestSymbols with the JSON and SARIF
// files asked for, and returns their paths (with %p expanded).
func racesInFiles(t *testing.T) (jsonPath, sarifPath string, syms map[string]uint64) {
	exe := buildProgram(t, symbolsProgram)
	syms = elfSymbols(t, exe)
	dir := t.TempDir()
	b := newBench(t, "json_path="+filepath.Join(dir, "r.%p.json")+":sarif_path="+filepath.Join(dir, "r.sarif"))
	b.d.rep.sym.exe = exe
	t1 := b.create(0, syms["main"]+5)
	t2 := b.create(0, 0x510)
	b.flush(t1, wr(syms["counter"]+8, 4, uint32(syms["bump"])))
	b.flush(t2, rd(syms["counter"]+8, 4, uint32(syms["bump"]+4)))
	if races, out := b.finish(); races != 1 {
		t.Fatalf("%d races, want 1:\n%s", races, out)
	}
	return filepath.Join(dir, fmt.Sprintf("r.%d.json", os.Getpid())), filepath.Join(dir, "r.sarif"), syms
}

// json_path: one JSON object per report, a line each, with both accesses,
// their threads and stacks, and the location.
func TestJSONReports(t *testing.T) {
	path, _, syms := racesInFiles(t)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var reps []jsonReport
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r jsonReport
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		reps = append(reps, r)
	}
	if len(reps) != 1 {
		t.Fatalf("%d reports in %s, want 1", len(reps), path)
	}
	r := reps[0]
	if r.Kind != "data race" || r.Pid != os.Getpid() || r.Address != hexAddr(syms["counter"]+8) {
		t.Errorf("report %+v: want a data race at counter+8 in this process", r)
	}
	if len(r.Accesses) != 2 || r.Accesses[0].Thread == r.Accesses[1].Thread ||
		(r.Accesses[0].Kind != "write" && r.Accesses[1].Kind != "write") {
		t.Fatalf("accesses %+v: want two, of two threads, one a write", r.Accesses)
	}
	top := r.Accesses[1].Stack[0]
	if top.Function != "bump" || filepath.Base(top.File) != "prog.c" || top.Line != 4 || top.PC != hexAddr(syms["bump"]) {
		t.Errorf("previous access's frame %+v, want bump at prog.c:4", top)
	}
	if r.Location == nil || r.Location.Kind != "global" || r.Location.Name != "counter" || r.Location.Offset != 8 {
		t.Errorf("location %+v, want global counter at offset 8", r.Location)
	}
	if len(r.Threads) != 2 || r.Threads[1].Parent == nil || *r.Threads[1].Parent != 0 || len(r.Threads[1].CreateStack) == 0 {
		t.Errorf("threads %+v: want both, T1 created by T0 with a stack", r.Threads)
	}
}

// sarif_path: a SARIF 2.1.0 log whose structure holds what the standard
// requires of the parts we write, checked on the file read back as
// generic JSON (not through our own types).
func TestSARIFLog(t *testing.T) {
	_, path, _ := racesInFiles(t)
	log := sarifcheck.File(t, path)
	results := log["runs"].([]any)[0].(map[string]any)["results"].([]any)
	if len(results) != 1 {
		t.Fatalf("%d results, want 1", len(results))
	}
	res := results[0].(map[string]any)
	loc := res["locations"].([]any)[0].(map[string]any)["physicalLocation"].(map[string]any)
	uri := loc["artifactLocation"].(map[string]any)["uri"].(string)
	line := loc["region"].(map[string]any)["startLine"].(float64)
	if !strings.HasSuffix(uri, "/prog.c") || !strings.HasPrefix(uri, "file:///") || line != 4 {
		t.Errorf("result location %s:%v, want file:///.../prog.c:4", uri, line)
	}
	if rel := res["relatedLocations"].([]any); len(rel) != 1 {
		t.Errorf("%d related locations, want the previous access", len(rel))
	}
	if msg := res["message"].(map[string]any)["text"].(string); !strings.Contains(msg, "global 'counter'") {
		t.Errorf("message %q does not name the variable", msg)
	}
}

// An empty run is still a whole log (a CI step uploads what it finds).
func TestSARIFEmpty(t *testing.T) {
	path := filepath.Join(t.TempDir(), "empty.sarif")
	b := newBench(t, "sarif_path="+path)
	if races, _ := b.finish(); races != 0 {
		t.Fatal(races)
	}
	sarifcheck.File(t, path)
}
