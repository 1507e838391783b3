// Package rewrite owns hgrewrite's rewriting pipeline, from a parsed ELF
// executable to the bytes of the rewritten one: the whole-binary graph
// with the accesses that are atomic already marked (Graph), the loop
// analysis over it (LoopInput), the plan that turns the loops found into
// spin marks and hooks, patching with its retry rounds for hooks that
// cannot be placed, writing the new ELF image and the self-check that it
// parses (Rewrite), and the --list-loops listing, --stats counts and
// --dump-cfg graphs of the result (ListLoops, Result.WriteStats,
// CFGDumps). It does no file I/O: cmd/hgrewrite reads and writes the
// files, and tests build their graphs here so that they test what ships.
package rewrite

import (
	"cmp"
	"debug/elf"
	"errors"
	"fmt"
	"slices"
	"time"

	"hgrewrite/cfg"
	"hgrewrite/elfrw"
	"hgrewrite/elide"
	"hgrewrite/loops"
	"hgrewrite/patch"
)

// Options says what to instrument.
type Options struct {
	InstrumentStack bool          // also rsp- and frame-pointer-relative accesses
	KeepRedundant   bool          // check accesses package elide finds redundant too
	NoBatch         bool          // one runtime call per access, not per group (elide.Batches)
	NoCallTrace     bool          // no call-trace glue at function entries (patch/trace.go)
	Loops           bool          // find wait-enclosing and spinning-read loops and instrument them
	LoopOptions     loops.Options // their size limits
}

// Result is a rewritten executable and what the pipeline saw on the way.
type Result struct {
	Image       []byte        // the rewritten ELF file
	Graph       *cfg.Graph    // the graph instrumented, spin marks included
	Loops       *loops.Result // nil when loop analysis is off
	LoopTime    time.Duration // loop analysis and planning
	Stats       patch.Stats   // of the last patching round
	Undecodable int           // undecodable instructions in reachable code
	TextSize    int           // trampoline bytes
}

// Rewrite instruments bin and writes the new image.
func Rewrite(bin *elfrw.Binary, opt Options) (*Result, error) {
	g, bad := Graph(bin)
	r := &Result{Graph: g, Undecodable: bad}
	popt := patch.Options{InstrumentStack: opt.InstrumentStack, ReadOnly: readOnly(bin), TraceCalls: !opt.NoCallTrace}
	var li loops.Input
	if opt.Loops {
		start := time.Now()
		li = LoopInput(bin, g)
		r.Loops = loops.Analyze(li, opt.LoopOptions)
		popt.Hooks = planLoops(li, r.Loops)
		r.LoopTime = time.Since(start)
	}
	if popt.Hooks == nil {
		popt.Hooks = &patch.Hooks{}
	}
	entries := planAnnotations(bin, g, popt.Hooks, nil)
	ein := elideInput(bin, g, popt.Hooks)
	if !opt.KeepRedundant {
		popt.Redundant = elide.Redundant(ein)
	}
	if !opt.NoBatch {
		popt.Batches = elide.Batches(ein)
	}
	lay, err := bin.PlanLayout()
	if err != nil {
		return nil, err
	}
	lay.HeaderFlags = vectorFlags(bin, g)
	res, err := patchRounds(bin, g, lay, li, r.Loops, entries, popt)
	if err != nil {
		return nil, err
	}
	res, err = patchUnelided(ein, popt, res, func(opt patch.Options) (*patch.Result, error) {
		return patchRounds(bin, g, lay, li, r.Loops, entries, opt)
	})
	if err != nil {
		return nil, err
	}
	patches := make([]elfrw.CodePatch, len(res.Patches))
	for i, p := range res.Patches {
		patches[i] = elfrw.CodePatch{Addr: p.Addr, Bytes: p.Bytes}
	}
	if r.Image, err = bin.Write(lay, res.Text, res.RetStub, patches); err != nil {
		return nil, err
	}
	if err := selfCheck(r.Image); err != nil {
		return nil, err
	}
	r.Stats, r.TextSize = res.Stats, len(res.Text)
	return r, nil
}

// elideInput is what package elide reads of the graph; the loop hooks
// synchronise.
func elideInput(bin *elfrw.Binary, g *cfg.Graph, hooks *patch.Hooks) elide.Input {
	decode := LoopInput(bin, g).Decode
	return elide.Input{Graph: g, Decode: decode, Hooked: hooks.InstHooked, ExitHooked: hooks.ExitHooked,
		Unknown: inRanges(bin.PadsUnknown)}
}

// inRanges says whether an address lies in one of fdes' ranges.
func inRanges(fdes []elfrw.FDE) func(uint64) bool {
	if len(fdes) == 0 {
		return nil
	}
	rs := slices.Clone(fdes)
	slices.SortFunc(rs, func(a, b elfrw.FDE) int { return cmp.Compare(a.Start, b.Start) })
	return func(a uint64) bool {
		i, _ := slices.BinarySearchFunc(rs, a, func(f elfrw.FDE, a uint64) int { return cmp.Compare(f.Start, a+1) })
		// rs[:i] start at or before a; FDEs do not overlap, so the last
		// of them is the only one that may hold a
		return i > 0 && a < rs[i-1].End
	}
}

// patchRounds patches the graph. Hooks that could not be placed drop
// their loops' hooks entirely and the graph is patched again (a loop is
// hooked whole or not at all), at most three more times; so do annotation
// functions whose entry hook could not be placed (entries: by the start
// of their first block), whose calls are hooked instead.
func patchRounds(bin *elfrw.Binary, g *cfg.Graph, lay *elfrw.Layout, li loops.Input, lr *loops.Result, entries map[uint64]uint64, opt patch.Options) (*patch.Result, error) {
	pl := patch.Layout{TextAddr: lay.TextAddr, SlotAccess: lay.SlotAccess(), SlotRange: lay.SlotRange(), SlotBatch: lay.SlotBatch(),
		SlotTrace: lay.SlotTrace(), PIE: bin.PIE}
	code := func(addr, n uint64) []byte { return bin.Bytes(addr, n) }
	res, err := patch.Rewrite(g, code, pl, opt)
	if err != nil {
		return nil, err
	}
	failed := map[uint64]bool{}
	entryFailed := map[uint64]bool{}
	for round := 0; len(res.FailedHooks) > 0 && round < 3; round++ {
		again := lr != nil
		for _, a := range res.FailedHooks {
			failed[a] = true
			if fn, ok := entries[a]; ok && !entryFailed[fn] {
				entryFailed[fn], again = true, true
			}
		}
		if !again {
			break
		}
		hooks := opt.Hooks
		if lr != nil {
			hooks = planHooks(li, lr, failed)
		}
		entries = planAnnotations(bin, g, hooks, entryFailed)
		opt.Hooks = hooks
		if res, err = patch.Rewrite(g, code, pl, opt); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// patchUnelided patches again (repatch) while blocks the patcher failed
// on held checks that made accesses of other blocks redundant
// (elide.Input.Unchecked): the failed blocks check nothing, so those
// accesses need their own checks. The failed blocks can only grow; after
// three rounds every check is kept.
func patchUnelided(ein elide.Input, opt patch.Options, res *patch.Result,
	repatch func(patch.Options) (*patch.Result, error)) (*patch.Result, error) {
	failed := map[uint64]bool{}
	for round := 0; opt.Redundant != nil; round++ {
		grew := false
		for _, a := range res.FailedBlocks {
			grew = grew || !failed[a]
			failed[a] = true
		}
		if !grew {
			return res, nil
		}
		ein.Unchecked = func(blk uint64) bool { return failed[blk] }
		now := elide.Redundant(ein)
		if !lostOutside(ein.Graph, opt.Redundant, now, failed) {
			return res, nil // the failed blocks stood for no other block's checks
		}
		if opt.Redundant = now; round == 3 {
			opt.Redundant = nil
		}
		var err error
		if res, err = repatch(opt); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// lostOutside: an access outside the failed blocks was redundant before
// and is not now.
func lostOutside(g *cfg.Graph, before, now map[uint64]bool, failed map[uint64]bool) bool {
	for a := range before {
		if !now[a] && !failed[g.Blocks[g.BlockAt(a)].Start] {
			return true
		}
	}
	return false
}

// selfCheck parses the image written. The only error it may give is that
// the image is hgrewrite's output (it loads the runtime library); any
// other is a bug of the writer.
func selfCheck(img []byte) error {
	if _, err := elfrw.Parse(img); err != nil && !errors.Is(err, elfrw.ErrAlreadyRewritten) {
		return fmt.Errorf("internal error: output does not parse: %v", err)
	}
	return nil
}

// readOnly is what bin never writes while threads run: its loadable
// segments without write permission and its RELRO range.
func readOnly(bin *elfrw.Binary) []patch.Range {
	var rs []patch.Range
	for _, p := range bin.F.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_W == 0 || p.Type == elf.PT_GNU_RELRO {
			rs = append(rs, patch.Range{Start: p.Vaddr, End: p.Vaddr + p.Memsz})
		}
	}
	return rs
}
