package hgopts

import (
	"strings"
	"testing"
)

func TestParseOptions(t *testing.T) {
	good := map[string]Options{
		"":                            {},
		"stats=1":                     {Stats: true},
		"stats=yes verbosity=2":       {Stats: true, Verbosity: 2},
		"stats=0:log_path=/tmp/x":     {LogPath: "/tmp/x"},
		"  stats=true \t verbosity=0": {Stats: true},
	}
	for in, want := range good {
		got, err := Parse(in)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	bad := map[string]string{
		"bogus=1":      `unknown option "bogus"`,
		"stats":        `"stats" is not key=value`,
		"=1":           `"=1" is not key=value`,
		"stats=2":      `bad value "2" for stats`,
		"verbosity=x":  `bad value "x" for verbosity`,
		"verbosity=-1": `bad value "-1" for verbosity`,
		"log_path=":    `bad value "" for log_path`,
	}
	for in, want := range bad {
		if _, err := Parse(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) error %v; want %q", in, err, want)
		}
	}
}
