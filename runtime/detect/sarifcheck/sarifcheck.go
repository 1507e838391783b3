// Package sarifcheck checks, for tests, that a SARIF log (read back as
// generic JSON, not through the writer's own types) has the structure
// SARIF 2.1.0 requires of the objects hgrewrite writes: required
// properties and their types, and the references from results to rules.
package sarifcheck

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"testing"
)

// File reads the SARIF log at path, reports through t every way it
// breaks those rules, and returns it as generic JSON for the caller's own
// checks.
func File(t testing.TB, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var log map[string]any
	if err := json.Unmarshal(data, &log); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	validator{t}.check(log)
	return log
}

type validator struct{ t testing.TB }

func (v validator) fail(where, what string) {
	v.t.Helper()
	v.t.Errorf("SARIF %s: %s", where, what)
}

func (v validator) object(x any, where string) map[string]any {
	m, ok := x.(map[string]any)
	if !ok {
		v.fail(where, "not an object")
	}
	return m
}

func (v validator) array(x any, where string) []any {
	a, ok := x.([]any)
	if !ok {
		v.fail(where, "not an array")
	}
	return a
}

func (v validator) str(x any, where string) string {
	s, ok := x.(string)
	if !ok || s == "" {
		v.fail(where, "not a non-empty string")
	}
	return s
}

func (v validator) message(x any, where string) {
	v.str(v.object(x, where)["text"], where+".text")
}

func (v validator) check(log map[string]any) {
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

func (v validator) location(x any, where string) {
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
