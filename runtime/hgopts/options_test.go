package hgopts

import (
	"strings"
	"testing"
)

func TestParseOptions(t *testing.T) {
	d := Defaults()
	if !d.Deadlocks {
		t.Error("detect_deadlocks is off by default")
	}
	with := func(f func(o *Options)) Options { o := d; f(&o); return o }
	good := map[string]Options{
		"":                            d,
		"stats=1":                     with(func(o *Options) { o.Stats = true }),
		"stats=yes verbosity=2":       with(func(o *Options) { o.Stats, o.Verbosity = true, 2 }),
		"stats=0:log_path=/tmp/x":     with(func(o *Options) { o.LogPath = "/tmp/x" }),
		"  stats=true \t verbosity=0": with(func(o *Options) { o.Stats = true }),
		"msm=long:exitcode=0":         with(func(o *Options) { o.MSM, o.ExitCode = "long", 0 }),
		"lib=no max_reports=3":        with(func(o *Options) { o.Lib, o.MaxReports = false, 3 }),
		"halt_on_error=1 detect=0":    with(func(o *Options) { o.HaltOnError, o.Detect = true, false }),
		"lsd=no spin=0":               with(func(o *Options) { o.LSD, o.Spin = "no", false }),
		"lsd=yes":                     with(func(o *Options) { o.LSD = "yes" }),
		"handoff=no":                  with(func(o *Options) { o.Handoff = false }),
		"detect_deadlocks=0":          with(func(o *Options) { o.Deadlocks = false }),
	}
	for in, want := range good {
		got, err := Parse(in)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	bad := map[string]string{
		"bogus=1":            `unknown option "bogus"`,
		"stats":              `"stats" is not key=value`,
		"=1":                 `"=1" is not key=value`,
		"stats=2":            `bad value "2" for stats`,
		"verbosity=x":        `bad value "x" for verbosity`,
		"verbosity=-1":       `bad value "-1" for verbosity`,
		"log_path=":          `bad value "" for log_path`,
		"msm=medium":         `bad value "medium" for msm`,
		"exitcode=300":       `bad value "300" for exitcode`,
		"max_reports=a":      `bad value "a" for max_reports`,
		"lsd=maybe":          `bad value "maybe" for lsd`,
		"spin=2":             `bad value "2" for spin`,
		"detect_deadlocks=x": `bad value "x" for detect_deadlocks`,
	}
	for in, want := range bad {
		if _, err := Parse(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) error %v; want %q", in, err, want)
		}
	}
}

// The help lists every key once, with a default that Parse takes back
// to Defaults, and an example that parses.
func TestHelp(t *testing.T) {
	var b strings.Builder
	Help(&b)
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	var listed []string
	for _, l := range lines {
		if !strings.HasPrefix(l, "  ") {
			continue
		}
		f := strings.Fields(l)
		key := f[0]
		def := strings.TrimSuffix(f[len(f)-1], ")")
		listed = append(listed, key)
		if def == "none" {
			continue
		}
		if o, err := Parse(key + "=" + def); err != nil || o != Defaults() {
			t.Errorf("%s: the default shown, %q, parses to %+v, %v; want the defaults", key, def, o, err)
		}
	}
	if got, want := strings.Join(listed, ", "), keys(); got != want {
		t.Errorf("help lists %s; want %s", got, want)
	}
	ex := lines[len(lines)-1]
	val, ok := strings.CutPrefix(ex, "Example: HG_OPTIONS=")
	if !ok {
		t.Fatalf("no example: %q", ex)
	}
	if _, err := Parse(strings.Fields(val)[0]); err != nil {
		t.Errorf("the example does not parse: %v", err)
	}
}
