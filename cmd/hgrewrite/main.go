// Command hgrewrite rewrites an x86-64 ELF executable so that it reports
// data races when it runs: hgrewrite ./prog -o prog.hg.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"hgrewrite/cfg"
	"hgrewrite/elfrw"
	"hgrewrite/loops"
	"hgrewrite/rewrite"
	"hgrewrite/runtime/hgopts"
)

// version is set by the Makefile (-X main.version=...).
var version = "dev"

const usage = `Usage: hgrewrite [flags] INPUT -o OUTPUT

Rewrites the x86-64 ELF executable INPUT into OUTPUT, an executable that
checks every memory access for data races when it runs. OUTPUT loads the
runtime library ` + elfrw.RuntimeLibName + `, which hgrewrite copies next to it; keep the two
files together. Run OUTPUT directly; HG_OPTIONS (e.g. HG_OPTIONS=stats=1)
sets run-time options (listed below the flags).

Flags:
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

type config struct {
	output      string
	verbose     bool
	stats       bool
	showVersion bool
	runtimeLib  string
	opt         rewrite.Options
	listLoops   bool
	dumpCFG     string
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("hgrewrite", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	var c config
	fs.StringVarP(&c.output, "output", "o", "", "write the rewritten executable to `FILE` (required)")
	fs.BoolVarP(&c.verbose, "verbose", "v", false, "say what is being done")
	fs.BoolVar(&c.stats, "stats", false, "print instruction, instrumentation and patch-tactic counts")
	fs.BoolVar(&c.showVersion, "version", false, "print the version and exit")
	fs.BoolVar(&c.opt.InstrumentStack, "instrument-stack", false, "also instrument stack accesses (rsp- and frame-pointer-relative)")
	fs.BoolVar(&c.opt.KeepRedundant, "keep-redundant", false, "also check accesses whose check an earlier access makes redundant on every path to them")
	fs.BoolVar(&c.opt.NoBatch, "no-batch", false, "one runtime call per checked access (default: one per group of a basic block's accesses)")
	fs.BoolVar(&c.opt.NoCallTrace, "no-call-trace", false, "no call trace at function entries: reports then show an earlier access without its callers")
	fs.StringVar(&c.runtimeLib, "runtime", "", "runtime library to ship with the output (default: "+elfrw.RuntimeLibName+" beside the hgrewrite binary)")
	fs.BoolVar(&c.opt.Loops, "loops", true, "find wait-enclosing and spinning-read loops and instrument them (--loops=false: plain condition-variable and no ad-hoc synchronisation handling)")
	fs.BoolVar(&c.listLoops, "list-loops", false, "print the wait-enclosing and spinning-read loops of INPUT and exit (no -o needed; with --stats, also counts)")
	fs.StringVar(&c.dumpCFG, "dump-cfg", "", "write Graphviz files of the functions holding such loops into `DIR`")
	lo := &c.opt.LoopOptions
	fs.IntVar(&lo.SpinBlocks, "spin-blocks", loops.DefaultSpinBlocks, "largest spinning-read loop, in basic blocks")
	fs.IntVar(&lo.WaitBlocks, "wait-blocks", loops.DefaultWaitBlocks, "largest wait-enclosing loop, in basic blocks")
	fs.IntVar(&lo.WaitBytes, "wait-bytes", loops.DefaultWaitBytes, "largest wait-enclosing loop, in bytes of code")
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
		fmt.Fprintln(stderr)
		hgopts.Help(stderr)
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
	if lo.SpinBlocks < 1 || lo.WaitBlocks < 1 || lo.WaitBytes < 1 {
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
	if err := rewriteFile(fs.Arg(0), &c, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "hgrewrite: %v\n", err)
		return 1
	}
	return 0
}

func rewriteFile(input string, c *config, stdout, stderr io.Writer) error {
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
	res, err := rewrite.Rewrite(bin, c.opt)
	if err != nil {
		return fmt.Errorf("%s: %w", input, err)
	}
	if res.Loops != nil {
		if err := showFound(bin, res.Graph, res.Loops, c, stdout); err != nil {
			return err
		}
	}
	if err := writeFileAtomic(c.output, res.Image, 0o755); err != nil {
		return err
	}
	if err := installRuntime(lib, filepath.Dir(c.output)); err != nil {
		os.Remove(c.output)
		return err
	}
	if c.verbose {
		fmt.Fprintf(stderr, "hgrewrite: wrote %s (%d bytes, %d trampoline bytes) in %.2fs\n",
			c.output, len(res.Image), res.TextSize, time.Since(start).Seconds())
	}
	if c.stats {
		res.WriteStats(stdout, time.Since(start))
	}
	return nil
}

// showLoops is --list-loops without -o: analyse, print, write nothing.
func showLoops(input string, c *config, stdout io.Writer) error {
	bin, err := elfrw.Open(input)
	if err != nil {
		return fmt.Errorf("%s: %w", input, err)
	}
	g, _ := rewrite.Graph(bin)
	lr := loops.Analyze(rewrite.LoopInput(bin, g), c.opt.LoopOptions)
	return showFound(bin, g, lr, c, stdout)
}

// showFound lists the loops found (--list-loops, C++ names demangled:
// demangle.go) and writes their functions' graphs (--dump-cfg).
func showFound(bin *elfrw.Binary, g *cfg.Graph, lr *loops.Result, c *config, stdout io.Writer) error {
	if c.listLoops {
		var list strings.Builder
		rewrite.ListLoops(&list, bin, g, lr, c.stats)
		if _, err := io.WriteString(stdout, demangleText(list.String())); err != nil {
			return err
		}
	}
	if c.dumpCFG == "" {
		return nil
	}
	if err := os.MkdirAll(c.dumpCFG, 0o755); err != nil {
		return err
	}
	for _, d := range rewrite.CFGDumps(g, lr) {
		if err := os.WriteFile(filepath.Join(c.dumpCFG, d.File), []byte(d.Dot), 0o644); err != nil {
			return err
		}
	}
	return nil
}
