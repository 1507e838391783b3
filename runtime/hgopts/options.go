// Package hgopts parses HG_OPTIONS, the run-time settings of rewritten
// programs: key=value pairs separated by spaces or colons, as in
// TSAN_OPTIONS. It is pure Go so that it can be tested without the runtime's
// cgo start-up code.
package hgopts

import (
	"fmt"
	"strconv"
	"strings"
)

// Options are the run-time settings.
type Options struct {
	MSM         string // "short" (default) or "long": the memory state machine
	ExitCode    int    // exit status when races were reported (default 66); 0 keeps the program's
	LogPath     string // write output here (pid appended) instead of stderr
	HaltOnError bool   // exit at the first report
	Verbosity   int    // 0: reports only; 1: also start-up notes
	Stats       bool   // print access counts at exit
	Lib         bool   // use pthread semantics (default); false: only create/join synchronise
	MaxReports  int    // stop reporting after this many reports (0: no limit)
	Detect      bool   // race detection on (default); false: only count accesses
	LSD         string // condition variables (ch. 6): "no" (plain wait semantics), "yes" (wait loops, one segment per cv), "wr" (default: wait loops and write/read relations)
	Spin        bool   // spinning-read loops (ch. 7) synchronise (default); false: their loads and writes are plain accesses
	Handoff     bool   // lock hand-offs (default): a lock-protected region that reads what an earlier region of another thread wrote happens after that region; false: locks give locksets only
	Deadlocks   bool   // lock-order inversions (potential deadlocks) are reported (default); false: the lock-order graph is not kept
}

// Defaults are the settings when HG_OPTIONS is empty.
func Defaults() Options {
	return Options{MSM: "short", ExitCode: 66, Lib: true, Detect: true, LSD: "wr", Spin: true, Handoff: true,
		Deadlocks: true}
}

var keys = "msm, exitcode, log_path, halt_on_error, verbosity, stats, lib, max_reports, detect, lsd, spin, handoff, detect_deadlocks"

// Parse parses an HG_OPTIONS value.
func Parse(s string) (Options, error) {
	o := Defaults()
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ':' || r == '\t' || r == '\n' })
	for _, f := range fields {
		key, val, ok := strings.Cut(f, "=")
		if !ok || key == "" {
			return o, fmt.Errorf("%q is not key=value", f)
		}
		var err error
		switch key {
		case "msm":
			if val != "short" && val != "long" {
				err = fmt.Errorf("want short or long")
			}
			o.MSM = val
		case "exitcode":
			o.ExitCode, err = nonNegative(val, 255)
		case "log_path":
			if val == "" {
				err = fmt.Errorf("empty path")
			}
			o.LogPath = val
		case "halt_on_error":
			o.HaltOnError, err = parseBool(val)
		case "verbosity":
			o.Verbosity, err = nonNegative(val, 1<<30)
		case "stats":
			o.Stats, err = parseBool(val)
		case "lib":
			o.Lib, err = parseBool(val)
		case "max_reports":
			o.MaxReports, err = nonNegative(val, 1<<30)
		case "detect":
			o.Detect, err = parseBool(val)
		case "lsd":
			if val != "no" && val != "yes" && val != "wr" {
				err = fmt.Errorf("want no, yes or wr")
			}
			o.LSD = val
		case "spin":
			o.Spin, err = parseBool(val)
		case "handoff":
			o.Handoff, err = parseBool(val)
		case "detect_deadlocks":
			o.Deadlocks, err = parseBool(val)
		default:
			return o, fmt.Errorf("unknown option %q (known: %s)", key, keys)
		}
		if err != nil {
			return o, fmt.Errorf("bad value %q for %s: %v", val, key, err)
		}
	}
	return o, nil
}

func nonNegative(v string, max int) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("not a number")
	}
	if n < 0 || n > max {
		return 0, fmt.Errorf("must be between 0 and %d", max)
	}
	return n, nil
}

func parseBool(v string) (bool, error) {
	switch v {
	case "1", "yes", "true":
		return true, nil
	case "0", "no", "false":
		return false, nil
	}
	return false, fmt.Errorf("want 0/1, yes/no or true/false")
}
