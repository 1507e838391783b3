// Package elide finds memory accesses whose race checks are redundant, so
// that the rewriter can leave them out (the per-region elimination of
// IFRit, seed 002).
//
// An access needs no check of its own when, on every path that reaches
// it, an access that is checked used the same address expression (the
// same base, index, scale and displacement, or the same RIP-relative
// target), covered at least the same bytes from the same start (its size
// is not smaller), and was of the same or a stronger kind (a read after a
// read or a write, a write after a write), with nothing in between that
// changes the address's registers or may synchronise: no atomic or
// locked instruction, no fence, no loop hook, no string instruction,
// nothing that did not decode, no call, and no plain store to another
// location (the runtime takes a store to a word locked instructions use
// as a release: a hand-written spinlock's unlock).
//
// The paths are those of the function's control-flow graph, forward
// only: what a block inherits is what every predecessor leaves (a
// forward must-analysis, flow.go), and a block that control may enter
// from elsewhere (a function's entry, a call's return site, a jump-table
// or code-pointer target: cfg.Block.Entry), by a backward edge, from a
// block the analysis does not follow, after an undecodable instruction
// or a loop-exit hook, or in a function the graph does not know, with an
// indirect jump or with landing pads the exception table did not give,
// inherits nothing. So the checks left out are repeats within one iteration of a
// loop or within straight-line code, as the issue's "same block or loop
// iteration" asks: a loop that polls a relaxed atomic (a plain load the
// runtime takes as an acquire) keeps the load's check in every
// iteration.
//
// Why this loses no race: the thread makes no synchronisation between the
// two accesses, so whatever another thread does that races with the
// second access also races with the first, which is checked, at the same
// location. What can change is which of the two accesses a report names.
package elide

import (
	"slices"

	"golang.org/x/arch/x86/x86asm"

	"hgrewrite/cfg"
	"hgrewrite/disasm"
	"hgrewrite/loops"
)

// Input is what the analysis reads: the graph, a full decoder for its
// instructions (register writes), the addresses where the rewriter
// places a hook (a wait or lock mark: the runtime synchronises there),
// and the blocks whose outgoing edges carry a loop-exit hook.
type Input struct {
	Graph  *cfg.Graph
	Decode func(addr uint64) (x86asm.Inst, bool)
	Hooked func(addr uint64) bool
	// ExitHooked: a hook runs on some edge that leaves the block that
	// starts at the address (nil: none does).
	ExitHooked func(blk uint64) bool
	// Unchecked: the block that starts at the address will not be
	// patched after all (patch.Result.FailedBlocks), so its accesses
	// make no later check redundant (nil: every block is patched).
	Unchecked func(blk uint64) bool
	// Unknown: control may enter the block that starts at the address
	// in ways the graph does not show (a function whose exception table
	// did not parse: its landing pads are unknown). Nil: none.
	Unknown func(blk uint64) bool
}

// key is an address expression.
type key struct {
	base, index x86asm.Reg
	scale       uint8
	disp        int64
	target      uint64 // RIP-relative operands: the address itself
}

// checked is an access checked on the way to the instruction at hand.
type checked struct {
	key   key
	size  uint16
	write bool
	regs  uint32 // registers of the address
}

// Redundant returns the addresses of the instructions whose checks are
// redundant. The blocks run in address order: every edge the analysis
// follows goes forward (flow.go), so a block's predecessors have run by
// the time it does.
func Redundant(in Input) map[uint64]bool {
	out := map[uint64]bool{}
	g := in.Graph
	f := newFlow(in)
	end := make([][]checked, len(g.Blocks))
	for bi := range g.Blocks {
		if in.checks(bi) {
			end[bi] = block(in, g.Insts(&g.Blocks[bi]), f.start(bi, end), out)
		}
	}
	return out
}

// checks: the block's accesses are checked (reached code of a section
// the patcher instruments, described by unwind information where the
// binary has it, and not a block the patcher failed on), so that what
// it checks can make a later check redundant.
func (in Input) checks(bi int) bool {
	g := in.Graph
	b := &g.Blocks[bi]
	return b.Reached && g.Sections[b.Sec].Instrument && (!g.HasUnwind || b.Unwound) &&
		(in.Unchecked == nil || !in.Unchecked(b.Start))
}

// block runs the analysis over one block's instructions from the
// accesses available at its start, adds the redundant ones to out, and
// returns the accesses available at its end.
func block(in Input, insts []disasm.Inst, start []checked, out map[uint64]bool) []checked {
	avail := slices.Clone(start)
	for i := range insts {
		ins := &insts[i]
		if in.Hooked != nil && in.Hooked(ins.Addr) {
			avail = avail[:0]
		}
		d, ok := in.Decode(ins.Addr)
		if !ok || isBarrier(ins, &d) {
			avail = avail[:0]
			continue
		}
		if c, ok := candidate(ins); ok {
			if c.write {
				avail = only(avail, c.key)
			}
			if covered(avail, c) {
				out[ins.Addr] = true
			} else {
				avail = append(avail, c)
			}
		}
		if w := loops.RegWrites(ins, &d); w != 0 {
			avail = slices.DeleteFunc(avail, func(c checked) bool { return c.regs&w != 0 })
		}
	}
	return avail
}

// only keeps the accesses through address expression k. A plain store
// may be a release at run time: the runtime takes a store to a word that
// locked instructions use (a hand-written spinlock's unlock, a flag
// polled by another thread) as one (runtime/detect, syncAccess). A
// check made before it stands for no access to another location after
// it, which another thread may reach through that release.
func only(avail []checked, k key) []checked {
	return slices.DeleteFunc(avail, func(c checked) bool { return c.key != k })
}

// isBarrier: the instruction synchronises, or its memory effects are not
// described by one operand.
func isBarrier(ins *disasm.Inst, x *x86asm.Inst) bool {
	if ins.Flags&(disasm.Lock|disasm.StringOp|disasm.Unsupported) != 0 {
		return true
	}
	if ins.Flags&disasm.HasMem != 0 && ins.Mem.Access&(disasm.Atomic|disasm.Spin|disasm.Ordered) != 0 {
		return true
	}
	switch x.Op {
	case x86asm.MFENCE, x86asm.LFENCE, x86asm.SFENCE, x86asm.XCHG, x86asm.CPUID, x86asm.SYSCALL, x86asm.SYSENTER, x86asm.INT,
		x86asm.XBEGIN, x86asm.XEND, x86asm.XABORT:
		return true
	}
	return false
}

// candidate describes an access the analysis can compare: a plain read or
// write through an ordinary operand (not the stack or frame, whose
// accesses are not checked, nor thread-local storage).
func candidate(ins *disasm.Inst) (checked, bool) {
	const other = disasm.TLSMem | disasm.StackMem | disasm.FrameMem | disasm.Unsupported | disasm.StringOp
	if ins.Flags&disasm.HasMem == 0 || ins.Flags&other != 0 || ins.Mem.Size == 0 {
		return checked{}, false
	}
	m := ins.Mem
	if m.Access&(disasm.Read|disasm.Write) == 0 {
		return checked{}, false
	}
	c := checked{size: m.Size, write: m.Access&disasm.Write != 0}
	if ins.Flags&disasm.RIPRel != 0 {
		c.key = key{target: ins.Target}
		return c, true
	}
	c.key = key{base: m.Base, index: m.Index, scale: m.Scale, disp: m.Disp}
	for _, r := range []x86asm.Reg{m.Base, m.Index} {
		if r == 0 {
			continue
		}
		n, ok := loops.GPRNumber(r)
		if !ok {
			return checked{}, false
		}
		c.regs |= 1 << n
	}
	return c, true
}

// covered: an access checked earlier makes c's check redundant.
func covered(avail []checked, c checked) bool {
	for _, a := range avail {
		if a.key == c.key && a.size >= c.size && (a.write || !c.write) {
			return true
		}
	}
	return false
}

// MaxBatch bounds the accesses of one batch (Batches).
const MaxBatch = 8

// Batches groups the accesses of each basic block whose checks one call
// into the runtime can make, at the first access of the group: plain
// reads and writes through ordinary operands (as Redundant compares them)
// with no synchronisation between the first and the last (the barriers
// and hooks that end Redundant's reach end a group too), and whose
// address registers nothing in the block writes from the group's first
// instruction on up to them, so that their addresses are known there. It
// maps each instruction of a group of two or more to the group's number.
//
// Why this loses no race and makes up none: a group's accesses are
// checked a few instructions before they are made, in their order, by a
// thread that does not synchronise in between; the checks see the same
// addresses, kinds and segment as they would one by one. Only the order
// among a group's checks and the accesses outside it (the stack's, which
// are not checked, and operands Redundant does not compare) can differ.
func Batches(in Input) map[uint64]int {
	out := map[uint64]int{}
	n := 0
	g := in.Graph
	for bi := range g.Blocks {
		blk := &g.Blocks[bi]
		if !blk.Reached || !g.Sections[blk.Sec].Instrument {
			continue
		}
		n = batchBlock(in, g.Insts(blk), out, n)
	}
	return out
}

// batchBlock adds the groups of one block to out, numbered from n on,
// and returns the next number.
func batchBlock(in Input, insts []disasm.Inst, out map[uint64]int, n int) int {
	var group []uint64
	var written uint32 // registers written since the group's first instruction
	end := func() {
		if len(group) >= 2 {
			for _, a := range group {
				out[a] = n
			}
			n++
		}
		group, written = group[:0], 0
	}
	for i := range insts {
		ins := &insts[i]
		if in.Hooked != nil && in.Hooked(ins.Addr) {
			end()
		}
		d, ok := in.Decode(ins.Addr)
		if !ok || isBarrier(ins, &d) {
			end()
			continue
		}
		if c, ok := candidate(ins); ok && batchable(ins) {
			if c.regs&written != 0 || len(group) == MaxBatch {
				end()
			}
			group = append(group, ins.Addr)
		}
		if len(group) > 0 {
			written |= loops.RegWrites(ins, &d)
		}
	}
	end()
	return n
}

// batchable: the access's address is computed from 64-bit registers or
// RIP (what the batch glue's lea takes), and it is not a stack access
// (whose operand would move with the glue's pushes).
func batchable(ins *disasm.Inst) bool {
	if ins.Flags&disasm.RIPRel != 0 {
		return true
	}
	for _, r := range []x86asm.Reg{ins.Mem.Base, ins.Mem.Index} {
		if r != 0 && (r < x86asm.RAX || r > x86asm.R15 || r == x86asm.RSP) {
			return false
		}
	}
	return true
}
