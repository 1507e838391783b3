package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Options are the run-time settings from HG_OPTIONS: key=value pairs
// separated by spaces or colons, as in TSAN_OPTIONS.
type Options struct {
	Stats     bool   // print access counts at exit
	Verbosity int    // 0: reports only; 1: also start-up notes
	LogPath   string // write output here (pid appended) instead of stderr
}

var current = Options{}

// stderr is the runtime's own duplicate of the program's standard error,
// made at start-up: programs such as coreutils close fd 2 before exiting.
var stderr = os.Stderr

func parseOptions(s string) (Options, error) {
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
