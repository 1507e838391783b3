package detect

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
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
	if r.Kind != "data race" || r.Pid != os.Getpid() || r.Address != hex(syms["counter"]+8) {
		t.Errorf("report %+v: want a data race at counter+8 in this process", r)
	}
	if len(r.Accesses) != 2 || r.Accesses[0].Thread == r.Accesses[1].Thread ||
		(r.Accesses[0].Kind != "write" && r.Accesses[1].Kind != "write") {
		t.Fatalf("accesses %+v: want two, of two threads, one a write", r.Accesses)
	}
	top := r.Accesses[1].Stack[0]
	if top.Function != "bump" || filepath.Base(top.File) != "prog.c" || top.Line != 4 || top.PC != hex(syms["bump"]) {
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
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var log map[string]any
	if err := json.Unmarshal(data, &log); err != nil {
		t.Fatal(err)
	}
	v := sarifValidator{t: t}
	v.check(log)
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
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var log map[string]any
	if err := json.Unmarshal(data, &log); err != nil {
		t.Fatal(err)
	}
	sarifValidator{t: t}.check(log)
}

// sarifValidator checks a log against the SARIF 2.1.0 rules for the
// objects hgrewrite writes: required properties, their types, and the
// references between results and rules.
type sarifValidator struct{ t *testing.T }

func (v sarifValidator) fail(where, what string) { v.t.Errorf("SARIF %s: %s", where, what) }

func (v sarifValidator) object(x any, where string) map[string]any {
	m, ok := x.(map[string]any)
	if !ok {
		v.fail(where, "not an object")
	}
	return m
}

func (v sarifValidator) array(x any, where string) []any {
	a, ok := x.([]any)
	if !ok {
		v.fail(where, "not an array")
	}
	return a
}

func (v sarifValidator) str(x any, where string) string {
	s, ok := x.(string)
	if !ok || s == "" {
		v.fail(where, "not a non-empty string")
	}
	return s
}

func (v sarifValidator) message(x any, where string) {
	v.str(v.object(x, where)["text"], where+".text")
}

func (v sarifValidator) check(log map[string]any) {
	if log["version"] != "2.1.0" {
		v.fail("version", fmt.Sprint(log["version"]))
	}
	v.str(log["$schema"], "$schema")
	runs := v.array(log["runs"], "runs")
	if len(runs) != 1 {
		v.fail("runs", "want one run")
		return
	}
	run := v.object(runs[0], "runs[0]")
	driver := v.object(v.object(run["tool"], "tool")["driver"], "tool.driver")
	v.str(driver["name"], "tool.driver.name")
	var ruleIDs []string
	for i, r := range v.array(driver["rules"], "tool.driver.rules") {
		where := "rules[" + strconv.Itoa(i) + "]"
		rule := v.object(r, where)
		ruleIDs = append(ruleIDs, v.str(rule["id"], where+".id"))
		v.message(rule["shortDescription"], where+".shortDescription")
	}
	for i, r := range v.array(run["results"], "results") {
		where := "results[" + strconv.Itoa(i) + "]"
		res := v.object(r, where)
		v.message(res["message"], where+".message")
		idx, ok := res["ruleIndex"].(float64)
		if !ok || int(idx) < 0 || int(idx) >= len(ruleIDs) || ruleIDs[int(idx)] != res["ruleId"] {
			v.fail(where, fmt.Sprintf("ruleId %v / ruleIndex %v do not name a rule of %v", res["ruleId"], res["ruleIndex"], ruleIDs))
		}
		switch res["level"] {
		case "none", "note", "warning", "error":
		default:
			v.fail(where+".level", fmt.Sprint(res["level"]))
		}
		for j, l := range v.array(res["locations"], where+".locations") {
			v.location(l, fmt.Sprintf("%s.locations[%d]", where, j))
		}
		if rel, ok := res["relatedLocations"]; ok {
			for j, l := range v.array(rel, where+".relatedLocations") {
				v.location(l, fmt.Sprintf("%s.relatedLocations[%d]", where, j))
			}
		}
		for j, s := range v.array(res["stacks"], where+".stacks") {
			st := v.object(s, fmt.Sprintf("%s.stacks[%d]", where, j))
			for k, f := range v.array(st["frames"], "frames") {
				v.location(v.object(f, "frame")["location"], fmt.Sprintf("%s.stacks[%d].frames[%d].location", where, j, k))
			}
		}
	}
}

func (v sarifValidator) location(x any, where string) {
	loc := v.object(x, where)
	if p, ok := loc["physicalLocation"]; ok {
		pl := v.object(p, where+".physicalLocation")
		v.str(v.object(pl["artifactLocation"], where+".artifactLocation")["uri"], where+".artifactLocation.uri")
		if r, ok := pl["region"]; ok {
			if line, ok := v.object(r, where+".region")["startLine"].(float64); !ok || line < 1 {
				v.fail(where+".region.startLine", "not a line number >= 1")
			}
		}
	}
	if id, ok := loc["id"]; ok {
		if n, ok := id.(float64); !ok || n < 0 {
			v.fail(where+".id", "not a non-negative integer")
		}
	}
}
