package detect

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// reportFiles writes the machine-readable copies of the reports:
// json_path gets one JSON object per report, a line each, as the report is
// printed; sarif_path gets one SARIF 2.1.0 log with a result per report,
// written at exit (SARIF is one document). "%p" in a path is the pid of
// the process the reports are about. Both are written by the reporter
// under its lock.
type reportFiles struct {
	jsonPath, sarifPath string
	results             []sarifResult
	rules               map[string]int // rule id -> index in the driver's rules
	errs                []error
	closed              bool
}

func (f *reportFiles) init(jsonPath, sarifPath string, pid int) {
	f.jsonPath = expandPid(jsonPath, pid)
	f.sarifPath = expandPid(sarifPath, pid)
}

func expandPid(path string, pid int) string {
	return strings.ReplaceAll(path, "%p", strconv.Itoa(pid))
}

// add writes rep to the JSON file and keeps its SARIF result.
func (f *reportFiles) add(rep *raceReport) {
	if f.closed {
		return
	}
	if f.jsonPath != "" {
		f.writeJSON(rep)
	}
	if f.sarifPath != "" {
		f.results = append(f.results, sarifResultOf(rep, f.ruleIndex(rep.Kind)))
	}
}

// writeJSON appends rep's line to the JSON file, opened for that write
// only: the program may close or reuse any descriptor it did not open
// itself (a daemon closing all of them), as the log file's writer
// (runtime/start.c hg_print) also assumes.
func (f *reportFiles) writeJSON(rep *raceReport) {
	line, err := json.Marshal(jsonReportOf(rep))
	if err != nil {
		f.fail(fmt.Errorf("json_path: %v", err))
		return
	}
	file, err := os.OpenFile(f.jsonPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		f.fail(fmt.Errorf("json_path: %v", err))
		f.jsonPath = "" // said once, at exit
		return
	}
	_, err = file.Write(append(line, '\n'))
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		f.fail(fmt.Errorf("json_path: %v", err))
	}
}

// fail keeps an error for the exit summary (the first of each file).
func (f *reportFiles) fail(err error) { f.errs = append(f.errs, err) }

func (f *reportFiles) err() error { return errors.Join(f.errs...) }

// close finishes the files: the SARIF log is written (also when no report
// was made: a CI step that uploads it finds an empty run, not nothing).
func (f *reportFiles) close() {
	if f.closed {
		return
	}
	f.closed = true
	if f.sarifPath != "" {
		if err := f.writeSARIF(); err != nil {
			f.fail(fmt.Errorf("sarif_path: %v", err))
		}
	}
}

// ---- JSON: one object per report ----

type jsonReport struct {
	Kind       string         `json:"kind"`
	Pid        int            `json:"pid"`
	Address    string         `json:"address,omitempty"`
	Accesses   []jsonAccess   `json:"accesses,omitempty"`
	Location   *jsonLocation  `json:"location,omitempty"`
	Locks      []jsonLock     `json:"locks_held"`
	Threads    []jsonThread   `json:"threads"`
	Verdict    string         `json:"verdict,omitempty"`
	LaterStack []jsonFrame    `json:"later_stack,omitempty"`
	Cycle      []jsonLockEdge `json:"cycle,omitempty"`
}

type jsonAccess struct {
	Kind   string      `json:"kind"`
	Size   uint64      `json:"size"`
	Thread int32       `json:"thread"`
	Stack  []jsonFrame `json:"stack"`
}

type jsonFrame struct {
	PC       string `json:"pc"`
	Function string `json:"function,omitempty"`
	File     string `json:"file,omitempty"`
	Line     int    `json:"line,omitempty"`
	Column   int    `json:"column,omitempty"`
	Module   string `json:"module,omitempty"`
	Offset   string `json:"module_offset,omitempty"`
	Inlined  bool   `json:"inlined,omitempty"`
}

type jsonLocation struct {
	Kind        string      `json:"kind"`
	Address     string      `json:"address"`
	Name        string      `json:"name,omitempty"`
	Offset      uint64      `json:"offset"`
	Size        uint64      `json:"size,omitempty"`
	Module      string      `json:"module,omitempty"`
	AllocThread *int32      `json:"alloc_thread,omitempty"`
	AllocStack  []jsonFrame `json:"alloc_stack,omitempty"`
}

type jsonLock struct {
	Address string `json:"address"`
	Name    string `json:"name,omitempty"`
}

type jsonThread struct {
	ID          int32       `json:"id"`
	Name        string      `json:"name,omitempty"`
	Main        bool        `json:"main,omitempty"`
	Parent      *int32      `json:"parent,omitempty"`
	CreateStack []jsonFrame `json:"create_stack,omitempty"`
	ReusedBy    int         `json:"earlier_threads_with_id,omitempty"`
}

type jsonLockEdge struct {
	From   jsonLock    `json:"from"`
	To     jsonLock    `json:"to"`
	Thread int32       `json:"thread"`
	Stack  []jsonFrame `json:"stack"`
}

func hexAddr(v uint64) string { return "0x" + strconv.FormatUint(v, 16) }

func jsonFrames(frames []Frame) []jsonFrame {
	out := make([]jsonFrame, 0, len(frames))
	for _, f := range frames {
		jf := jsonFrame{PC: hexAddr(f.PC), Function: f.Func, File: f.File, Line: f.Line, Column: f.Column,
			Module: f.Module, Inlined: f.Inlined}
		if f.Module != "" {
			jf.Offset = hexAddr(f.Offset)
		}
		out = append(out, jf)
	}
	return out
}

func jsonLocks(locks []reportLock) []jsonLock {
	out := make([]jsonLock, 0, len(locks))
	for _, l := range locks {
		out = append(out, jsonLock{hexAddr(l.Addr), l.Name})
	}
	return out
}

func jsonReportOf(rep *raceReport) jsonReport {
	j := jsonReport{Kind: rep.Kind, Pid: rep.Pid, Verdict: rep.Verdict, Locks: jsonLocks(rep.Locks),
		LaterStack: jsonFrames(rep.Later), Threads: []jsonThread{}}
	if rep.Kind == kindRace {
		j.Address = hexAddr(rep.Addr)
		loc := rep.Location
		jl := &jsonLocation{Kind: loc.Kind, Address: hexAddr(loc.Addr), Name: loc.Name, Offset: loc.Offset,
			Size: loc.Size, Module: loc.Module}
		if loc.Kind == "heap" {
			tid := loc.AllocTID
			jl.AllocThread = &tid
			jl.AllocStack = jsonFrames(loc.Alloc)
		}
		j.Location = jl
	}
	for _, a := range rep.Accesses {
		j.Accesses = append(j.Accesses, jsonAccess{a.Kind, a.Size, a.TID, jsonFrames(a.Stack)})
	}
	for _, t := range rep.Threads {
		jt := jsonThread{ID: t.TID, Name: t.Name, Main: t.Main, CreateStack: jsonFrames(t.Created), ReusedBy: t.Earlier}
		if t.Parent >= 0 {
			parent := t.Parent
			jt.Parent = &parent
		}
		j.Threads = append(j.Threads, jt)
	}
	for _, e := range rep.Cycle {
		j.Cycle = append(j.Cycle, jsonLockEdge{jsonLock{hexAddr(e.From.Addr), e.From.Name},
			jsonLock{hexAddr(e.To.Addr), e.To.Name}, e.TID, jsonFrames(e.Stack)})
	}
	return j
}

// ---- SARIF 2.1.0: one log, a result per report ----

const sarifSchema = "https://json.schemastore.org/sarif-2.1.0.json"

type sarifLog struct {
	Version string     `json:"version"`
	Schema  string     `json:"$schema"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool    sarifTool     `json:"tool"`
	Results []sarifResult `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	InformationURI string      `json:"informationUri"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID               string       `json:"id"`
	Name             string       `json:"name"`
	ShortDescription sarifMessage `json:"shortDescription"`
	DefaultConfig    sarifConfig  `json:"defaultConfiguration"`
}

type sarifConfig struct {
	Level string `json:"level"`
}

type sarifMessage struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID           string          `json:"ruleId"`
	RuleIndex        int             `json:"ruleIndex"`
	Level            string          `json:"level"`
	Message          sarifMessage    `json:"message"`
	Locations        []sarifLocation `json:"locations"`
	RelatedLocations []sarifLocation `json:"relatedLocations,omitempty"`
	Stacks           []sarifStack    `json:"stacks,omitempty"`
}

type sarifLocation struct {
	ID               *int                `json:"id,omitempty"`
	PhysicalLocation *sarifPhysical      `json:"physicalLocation,omitempty"`
	LogicalLocations []sarifLogicalPlace `json:"logicalLocations,omitempty"`
	Message          *sarifMessage       `json:"message,omitempty"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           *sarifRegion  `json:"region,omitempty"`
	Address          *sarifAddress `json:"address,omitempty"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifRegion struct {
	StartLine   int `json:"startLine"`
	StartColumn int `json:"startColumn,omitempty"`
}

type sarifAddress struct {
	AbsoluteAddress uint64 `json:"absoluteAddress"`
}

type sarifLogicalPlace struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
}

type sarifStack struct {
	Message sarifMessage `json:"message"`
	Frames  []sarifFrame `json:"frames"`
}

type sarifFrame struct {
	Location sarifLocation `json:"location"`
	Module   string        `json:"module,omitempty"`
	ThreadID int32         `json:"threadId"`
}

// The rules, by the kinds of report.
var sarifRules = map[string]sarifRule{
	kindRace: {ID: "data-race", Name: "DataRace",
		ShortDescription: sarifMessage{"Two threads access the same memory without ordering, at least one of them writing."},
		DefaultConfig:    sarifConfig{"error"}},
	kindLockOrder: {ID: "lock-order-inversion", Name: "LockOrderInversion",
		ShortDescription: sarifMessage{"Threads take the same mutexes in different orders: a potential deadlock."},
		DefaultConfig:    sarifConfig{"error"}},
}

func (f *reportFiles) ruleIndex(kind string) int {
	if f.rules == nil {
		f.rules = map[string]int{}
	}
	if i, ok := f.rules[kind]; ok {
		return i
	}
	f.rules[kind] = len(f.rules)
	return f.rules[kind]
}

func (f *reportFiles) writeSARIF() error {
	rules := make([]sarifRule, len(f.rules))
	for kind, i := range f.rules {
		rules[i] = sarifRules[kind]
	}
	results := f.results
	if results == nil {
		results = []sarifResult{}
	}
	log := sarifLog{Version: "2.1.0", Schema: sarifSchema, Runs: []sarifRun{{
		Tool:    sarifTool{sarifDriver{Name: "hgrewrite", InformationURI: "https://github.com/hgrewrite/hgrewrite", Rules: rules}},
		Results: results,
	}}}
	data, err := json.MarshalIndent(log, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(f.sarifPath, append(data, '\n'), 0o644)
}

// sarifPlace is the source location of a frame: file and line when the
// debug information gives them, else the module and address.
func sarifPlace(fr Frame) sarifLocation {
	loc := sarifLocation{}
	if fr.File != "" && fr.Line > 0 {
		loc.PhysicalLocation = &sarifPhysical{ArtifactLocation: sarifArtifact{fileURI(fr.File)},
			Region: &sarifRegion{StartLine: fr.Line, StartColumn: fr.Column}}
	} else if fr.Module != "" {
		loc.PhysicalLocation = &sarifPhysical{ArtifactLocation: sarifArtifact{fr.Module},
			Address: &sarifAddress{fr.Offset}}
	}
	if fr.Func != "" {
		loc.LogicalLocations = []sarifLogicalPlace{{fr.Func, "function"}}
	}
	return loc
}

// fileURI is a source path as a SARIF artifact URI: absolute paths as
// file:// URIs, relative ones as they are (relative to the build
// directory, as the compiler recorded them).
func fileURI(path string) string {
	if filepath.IsAbs(path) {
		return "file://" + filepath.ToSlash(path)
	}
	return filepath.ToSlash(path)
}

// firstSourceFrame is the innermost frame with a source line, else the
// innermost frame.
func firstSourceFrame(frames []Frame) (Frame, bool) {
	for _, f := range frames {
		if f.File != "" && f.Line > 0 {
			return f, true
		}
	}
	if len(frames) > 0 {
		return frames[0], true
	}
	return Frame{}, false
}

func sarifStackOf(msg string, tid int32, frames []Frame) sarifStack {
	st := sarifStack{Message: sarifMessage{msg}, Frames: []sarifFrame{}}
	for _, f := range frames {
		st.Frames = append(st.Frames, sarifFrame{Location: sarifPlace(f), Module: f.Module, ThreadID: tid})
	}
	return st
}

func sarifResultOf(rep *raceReport, rule int) sarifResult {
	res := sarifResult{RuleID: sarifRules[rep.Kind].ID, RuleIndex: rule, Level: "error",
		Message: sarifMessage{rep.summaryLine()}, Locations: []sarifLocation{}}
	for i, a := range rep.Accesses {
		what := fmt.Sprintf("%s of size %d by thread T%d", capitalize(a.Kind), a.Size, a.TID)
		if i > 0 {
			what = "Previous " + strings.ToLower(what)
		}
		res.place(i, what, a.TID, a.Stack)
	}
	for i, e := range rep.Cycle {
		res.place(i, fmt.Sprintf("%s acquired while holding %s in thread T%d", e.To.label(), e.From.label(), e.TID), e.TID, e.Stack)
	}
	return res
}

// place adds the i-th stack of a report (an access, or an acquisition of
// a lock-order cycle) to its result: the first as the result's location,
// the others as related locations saying what they are; all as stacks.
func (res *sarifResult) place(i int, what string, tid int32, stack []Frame) {
	if f, ok := firstSourceFrame(stack); ok {
		loc := sarifPlace(f)
		if i == 0 {
			res.Locations = append(res.Locations, loc)
		} else {
			id := i
			loc.ID, loc.Message = &id, &sarifMessage{what}
			res.RelatedLocations = append(res.RelatedLocations, loc)
		}
	}
	res.Stacks = append(res.Stacks, sarifStackOf(what, tid, stack))
}

// summaryLine is a report in one line, for SARIF's result message.
func (rep *raceReport) summaryLine() string {
	switch rep.Kind {
	case kindRace:
		var parts []string
		for i, a := range rep.Accesses {
			w := fmt.Sprintf("%s of size %d by thread T%d", a.Kind, a.Size, a.TID)
			if f, ok := firstSourceFrame(a.Stack); ok && f.Func != "" {
				w += " in " + f.Func
			}
			if i > 0 {
				w = "previous " + w
			}
			parts = append(parts, w)
		}
		return fmt.Sprintf("Data race on %s: %s.", rep.Location.name(), strings.Join(parts, "; "))
	case kindLockOrder:
		var names []string
		for _, e := range rep.Cycle {
			names = append(names, e.From.label())
		}
		if len(rep.Cycle) > 0 {
			names = append(names, rep.Cycle[0].From.label())
		}
		return "Lock-order inversion (potential deadlock): " + strings.Join(names, " => ") + "."
	}
	return rep.Kind
}

// name is the location in a few words.
func (l reportLocation) name() string {
	switch l.Kind {
	case "global":
		return fmt.Sprintf("global '%s'", l.Name)
	case "heap":
		return fmt.Sprintf("heap block of size %d at offset %d", l.Size, l.Offset)
	case "section":
		return fmt.Sprintf("%s+%#x", l.Name, l.Offset)
	}
	return hexAddr(l.Addr)
}
