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
	Stats     bool   // print access counts at exit
	Verbosity int    // 0: reports only; 1: also start-up notes
	LogPath   string // write output here (pid appended) instead of stderr
}

// Parse parses an HG_OPTIONS value.
func Parse(s string) (Options, error) {
	o := Options{}
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ':' || r == '\t' || r == '\n' })
	for _, f := range fields {
		key, val, ok := strings.Cut(f, "=")
		if !ok || key == "" {
			return o, fmt.Errorf("%q is not key=value", f)
		}
		var err error
		switch key {
		case "stats":
			o.Stats, err = parseBool(val)
		case "verbosity":
			o.Verbosity, err = strconv.Atoi(val)
			if err == nil && o.Verbosity < 0 {
				err = fmt.Errorf("must be >= 0")
			}
		case "log_path":
			if val == "" {
				err = fmt.Errorf("empty path")
			}
			o.LogPath = val
		default:
			return o, fmt.Errorf("unknown option %q (known: stats, verbosity, log_path)", key)
		}
		if err != nil {
			return o, fmt.Errorf("bad value %q for %s: %v", val, key, err)
		}
	}
	return o, nil
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
