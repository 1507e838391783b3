// Command hgrewrite rewrites an x86-64 ELF executable so that it reports
// data races when it runs: hgrewrite ./prog -o prog.hg.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/spf13/pflag"

	"hgrewrite/elfrw"
	"hgrewrite/loops"
	"hgrewrite/patch"
)

// version is set by the Makefile (-X main.version=...).
var version = "dev"

const usage = `Usage: hgrewrite [flags] INPUT -o OUTPUT

Rewrites the x86-64 ELF executable INPUT into OUTPUT, an executable that
checks every memory access for data races when it runs. OUTPUT loads the
runtime library ` + elfrw.RuntimeLibName + `, which hgrewrite copies next to it; keep the two
files together. Run OUTPUT directly; HG_OPTIONS (e.g. HG_OPTIONS=stats=1)
sets run-time options.

Flags:
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

type config struct {
	output          string
	verbose         bool
	stats           bool
	showVersion     bool
	instrumentStack bool
	runtimeLib      string
	loops           loopConfig
	listLoops       bool
	dumpCFG         string
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("hgrewrite", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	var c config
	fs.StringVarP(&c.output, "output", "o", "", "write the rewritten executable to `FILE` (required)")
	fs.BoolVarP(&c.verbose, "verbose", "v", false, "say what is being done")
	fs.BoolVar(&c.stats, "stats", false, "print instruction, instrumentation and patch-tactic counts")
	fs.BoolVar(&c.showVersion, "version", false, "print the version and exit")
	fs.BoolVar(&c.instrumentStack, "instrument-stack", false, "also instrument stack accesses (rsp- and frame-pointer-relative)")
	fs.StringVar(&c.runtimeLib, "runtime", "", "runtime library to ship with the output (default: "+elfrw.RuntimeLibName+" beside the hgrewrite binary)")
	fs.BoolVar(&c.loops.enabled, "loops", true, "find wait-enclosing and spinning-read loops and instrument them (--loops=false: plain condition-variable and no ad-hoc synchronisation handling)")
	fs.BoolVar(&c.listLoops, "list-loops", false, "print the wait-enclosing and spinning-read loops of INPUT and exit (no -o needed; with --stats, also counts)")
	fs.StringVar(&c.dumpCFG, "dump-cfg", "", "write Graphviz files of the functions holding such loops into `DIR`")
	fs.IntVar(&c.loops.opt.SpinBlocks, "spin-blocks", loops.DefaultSpinBlocks, "largest spinning-read loop, in basic blocks")
	fs.IntVar(&c.loops.opt.WaitBlocks, "wait-blocks", loops.DefaultWaitBlocks, "largest wait-enclosing loop, in basic blocks")
	fs.IntVar(&c.loops.opt.WaitBytes, "wait-bytes", loops.DefaultWaitBytes, "largest wait-enclosing loop, in bytes of code")
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "hgrewrite: %v (see hgrewrite --help)\n", err)
		return 2
	}
	if c.showVersion {
		fmt.Fprintf(stdout, "hgrewrite %s\n", version)
		return 0
	}
	if c.loops.opt.SpinBlocks < 1 || c.loops.opt.WaitBlocks < 1 || c.loops.opt.WaitBytes < 1 {
		fmt.Fprintln(stderr, "hgrewrite: --spin-blocks, --wait-blocks and --wait-bytes must be at least 1")
		return 2
	}
	if c.listLoops && fs.NArg() == 1 && c.output == "" {
		if err := showLoops(fs.Arg(0), &c, stdout); err != nil {
			fmt.Fprintf(stderr, "hgrewrite: %v\n", err)
			return 1
		}
		return 0
	}
	if fs.NArg() != 1 || c.output == "" {
		fmt.Fprintln(stderr, "hgrewrite: need exactly one INPUT and -o OUTPUT (see hgrewrite --help)")
		return 2
	}
	if err := rewrite(fs.Arg(0), &c, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "hgrewrite: %v\n", err)
		return 1
	}
	return 0
}

func rewrite(input string, c *config, stdout, stderr io.Writer) error {
	start := time.Now()
	lib, err := findRuntime(c.runtimeLib)
	if err != nil {
		return err
	}
	if err := checkOutput(input, c.output); err != nil {
		return err
	}
	bin, err := elfrw.Open(input)
	if err != nil {
		return fmt.Errorf("%s: %w", input, err)
	}
	res, err := instrument(bin, patch.Options{InstrumentStack: c.instrumentStack}, c.loops)
	if err != nil {
		return fmt.Errorf("%s: %w", input, err)
	}
	if c.listLoops && res.loops != nil {
		listLoops(stdout, bin, res.graph, res.loops, c.stats)
	}
	if c.dumpCFG != "" && res.loops != nil {
		if _, err := dumpCFG(c.dumpCFG, res.graph, res.loops); err != nil {
			return err
		}
	}
	if err := writeFileAtomic(c.output, res.image, 0o755); err != nil {
		return err
	}
	if err := installRuntime(lib, filepath.Dir(c.output)); err != nil {
		os.Remove(c.output)
		return err
	}
	if c.verbose {
		fmt.Fprintf(stderr, "hgrewrite: wrote %s (%d bytes, %d trampoline bytes) in %.2fs\n",
			c.output, len(res.image), res.textSize, time.Since(start).Seconds())
	}
	if c.stats {
		printStats(stdout, res, time.Since(start))
	}
	return nil
}

// showLoops is --list-loops without -o: analyse, print, write nothing.
func showLoops(input string, c *config, stdout io.Writer) error {
	bin, err := elfrw.Open(input)
	if err != nil {
		return fmt.Errorf("%s: %w", input, err)
	}
	g, _ := analyze(bin)
	lr, _ := findLoops(bin, g, c.loops.opt)
	listLoops(stdout, bin, g, lr, c.stats)
	if c.dumpCFG != "" {
		if _, err := dumpCFG(c.dumpCFG, g, lr); err != nil {
			return err
		}
	}
	return nil
}

func printStats(w io.Writer, res *result, took time.Duration) {
	s := res.stats
	fmt.Fprintf(w, "instructions decoded:        %d\n", s.Instructions)
	fmt.Fprintf(w, "undecodable instructions:    %d\n", res.undecodable)
	fmt.Fprintf(w, "memory instructions:         %d\n", s.MemInsts)
	pct := 0.0
	if s.MemInsts > 0 {
		pct = 100 * float64(s.Instrumented) / float64(s.MemInsts)
	}
	fmt.Fprintf(w, "instrumented:                %d (%.1f%%)\n", s.Instrumented, pct)
	for _, k := range sortedKeys(s.Skipped) {
		fmt.Fprintf(w, "skipped, %-30s %d\n", k+":", s.Skipped[k])
	}
	for _, k := range sortedKeys(s.Tactics) {
		fmt.Fprintf(w, "tactic %-32s %d blocks\n", k+":", s.Tactics[k])
	}
	fmt.Fprintf(w, "basic blocks:                %d\n", res.blocks)
	fmt.Fprintf(w, "functions:                   %d\n", res.funcs)
	fmt.Fprintf(w, "jump tables recovered:       %d\n", res.jumpTables)
	fmt.Fprintf(w, "trampoline bytes:            %d\n", res.textSize)
	if lr := res.loops; lr != nil {
		fmt.Fprintf(w, "loops:                       %d\n", lr.Stats.Loops)
		fmt.Fprintf(w, "wait-enclosing loops:        %d\n", lr.Stats.WaitLoops)
		fmt.Fprintf(w, "spinning-read loops:         %d\n", lr.Stats.SpinLoops)
		fmt.Fprintf(w, "loop hooks placed:           %d (not placeable: %d)\n", s.Hooks, s.HooksSkipped)
		fmt.Fprintf(w, "loop analysis time:          %.3fs\n", res.loopTime.Seconds())
	}
	fmt.Fprintf(w, "rewrite time:                %.3fs\n", took.Seconds())
}

func sortedKeys(m map[string]int) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
