// Package hgopts parses HG_OPTIONS, the run-time settings of rewritten
// programs: key=value pairs separated by spaces or colons, as in
// TSAN_OPTIONS. It owns the one list of keys (table), from which Parse and
// the help hgrewrite --help prints (Help) are made. It is pure Go so that it
// can be tested without the runtime's cgo start-up code.
package hgopts

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// Options are the run-time settings.
type Options struct {
	MSM          string // "short" (default) or "long": the memory state machine
	ExitCode     int    // exit status when races were reported (default 66); 0 keeps the program's
	LogPath      string // write output here (pid appended) instead of stderr
	HaltOnError  bool   // exit at the first report
	Verbosity    int    // 0: reports only; 1: also start-up notes
	Stats        bool   // print access counts at exit
	Lib          bool   // use pthread semantics (default); false: only create/join synchronise
	MaxReports   int    // stop reporting after this many reports (0: no limit)
	Detect       bool   // race detection on (default); false: only count accesses
	LSD          string // condition variables (ch. 6): "no" (plain wait semantics), "yes" (wait loops, one segment per cv), "wr" (default: wait loops and write/read relations)
	Spin         bool   // spinning-read loops (ch. 7) synchronise (default); false: their loads and writes are plain accesses
	Handoff      bool   // lock hand-offs (default): a lock-protected region that reads what an earlier region of another thread wrote happens after that region; false: locks give locksets only
	Suppressions string // a suppressions file in ThreadSanitizer's syntax (race:, race_top:, called_from_lib:, thread:, deadlock:)
	JSONPath     string // also write each report as a line of JSON to this file ("%p": the pid)
	SARIFPath    string // also write the reports as a SARIF 2.1.0 log to this file at exit ("%p": the pid)
	Deadlocks    bool   // lock-order inversions (potential deadlocks) are reported (default); false: the lock-order graph is not kept
}

// Defaults are the settings when HG_OPTIONS is empty.
func Defaults() Options {
	return Options{MSM: "short", ExitCode: 66, Lib: true, Detect: true, LSD: "wr", Spin: true, Handoff: true,
		Deadlocks: true}
}

// option is one HG_OPTIONS key: the field of Options it sets, how its
// value is checked, and what hgrewrite --help says of it (Help). The
// table below is the one list of keys: Parse, the error for an unknown
// key and the help are all made from it.
type option struct {
	key   string
	field func(*Options) any // a pointer to the field: *bool, *int or *string
	max   int                // *int: the largest value (the smallest is 0)
	one   []string           // *string: the values allowed; nil: any but ""
	help  string
}

var table = []option{
	{key: "msm", field: func(o *Options) any { return &o.MSM }, one: []string{"short", "long"},
		help: "memory state machine: short (a race at its first unsynchronised access) or long (waits for repeated evidence)"},
	{key: "exitcode", field: func(o *Options) any { return &o.ExitCode }, max: 255,
		help: "exit status when races were reported; 0 keeps the program's own"},
	{key: "log_path", field: func(o *Options) any { return &o.LogPath },
		help: "write reports and messages to the file PATH.<pid> instead of stderr"},
	{key: "halt_on_error", field: func(o *Options) any { return &o.HaltOnError },
		help: "exit (with exitcode) at the first report"},
	{key: "verbosity", field: func(o *Options) any { return &o.Verbosity }, max: 1 << 30,
		help: "1: more detail in reports and notices"},
	{key: "stats", field: func(o *Options) any { return &o.Stats },
		help: "at exit, print access counts, threads, and what the fast path handed to the detector"},
	{key: "lib", field: func(o *Options) any { return &o.Lib },
		help: "0: pthread mutexes, condition variables, semaphores and barriers are ignored (\"nolib\")"},
	{key: "max_reports", field: func(o *Options) any { return &o.MaxReports }, max: 1 << 30,
		help: "print at most this many reports (the summary counts all); 0: no limit"},
	{key: "detect", field: func(o *Options) any { return &o.Detect },
		help: "0: only count accesses"},
	{key: "lsd", field: func(o *Options) any { return &o.LSD }, one: []string{"no", "yes", "wr"},
		help: "condition variables: no (plain wait semantics), yes (wait loops), wr (wait loops and write/read relations)"},
	{key: "spin", field: func(o *Options) any { return &o.Spin },
		help: "0: spinning-read loops are not synchronisation"},
	{key: "handoff", field: func(o *Options) any { return &o.Handoff },
		help: "lock hand-offs order regions of one lock (docs/detector.md); 0: locks give locksets only"},
	{key: "detect_deadlocks", field: func(o *Options) any { return &o.Deadlocks },
		help: "report lock-order inversions (potential deadlocks); 0: the lock-order graph is not kept"},
	{key: "suppressions", field: func(o *Options) any { return &o.Suppressions },
		help: "a suppressions file in ThreadSanitizer's syntax (race:, race_top:, called_from_lib:, thread:, deadlock:)"},
	{key: "json_path", field: func(o *Options) any { return &o.JSONPath },
		help: "also append each report to this file as a line of JSON (%p: the pid)"},
	{key: "sarif_path", field: func(o *Options) any { return &o.SARIFPath },
		help: "also write the reports to this file as a SARIF 2.1.0 log at exit (%p: the pid)"},
}

// keys lists the known keys, for the error on an unknown one.
func keys() string {
	var k []string
	for _, opt := range table {
		k = append(k, opt.key)
	}
	return strings.Join(k, ", ")
}

// Parse parses an HG_OPTIONS value.
func Parse(s string) (Options, error) {
	o := Defaults()
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ':' || r == '\t' || r == '\n' })
	for _, f := range fields {
		key, val, ok := strings.Cut(f, "=")
		if !ok || key == "" {
			return o, fmt.Errorf("%q is not key=value", f)
		}
		i := slices.IndexFunc(table, func(opt option) bool { return opt.key == key })
		if i < 0 {
			return o, fmt.Errorf("unknown option %q (known: %s)", key, keys())
		}
		if err := table[i].set(&o, val); err != nil {
			return o, fmt.Errorf("bad value %q for %s: %v", val, key, err)
		}
	}
	return o, nil
}

// set parses val into the option's field of o.
func (opt option) set(o *Options, val string) error {
	var err error
	switch p := opt.field(o).(type) {
	case *bool:
		*p, err = parseBool(val)
	case *int:
		*p, err = nonNegative(val, opt.max)
	case *string:
		switch {
		case opt.one != nil && !slices.Contains(opt.one, val):
			err = fmt.Errorf("want %s", alternatives(opt.one))
		case val == "":
			err = fmt.Errorf("empty path")
		}
		*p = val
	}
	return err
}

// alternatives is "a, b or c".
func alternatives(vals []string) string {
	if len(vals) == 1 {
		return vals[0]
	}
	return strings.Join(vals[:len(vals)-1], ", ") + " or " + vals[len(vals)-1]
}

// Help writes the options for a usage message: one line per key with its
// default and what it does, then an example.
func Help(w io.Writer) {
	d := Defaults()
	fmt.Fprintln(w, "Run-time options: HG_OPTIONS, key=value pairs separated by ':' or spaces (as TSAN_OPTIONS):")
	for _, opt := range table {
		def := "none"
		switch p := opt.field(&d).(type) {
		case *bool:
			def = map[bool]string{true: "1", false: "0"}[*p]
		case *int:
			def = strconv.Itoa(*p)
		case *string:
			if *p != "" {
				def = *p
			}
		}
		fmt.Fprintf(w, "  %-14s %s (default %s)\n", opt.key, opt.help, def)
	}
	fmt.Fprintln(w, "Example: HG_OPTIONS=halt_on_error=1:log_path=/tmp/hg ./prog.hg")
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
