// Package patch turns the control-flow graph into an instrumentation plan and
// the machine code that carries it out: trampolines in a new executable
// segment, and the few bytes of original code that jump to them.
//
// The tactic is basic-block relocation. A basic block that holds memory
// accesses to instrument is copied into a trampoline, with a call into the
// runtime before each access and the copied instructions fixed up for their
// new address (RIP-relative operands, relative branches, calls that push the
// original return address). The block's first bytes in the original code
// become a jump to the trampoline; the rest of the block is filled with int3
// and is free for other jumps (the patch tactics: tactic.go). Because no known control transfer lands
// inside a block (package cfg splits at every such address), overwriting a
// block's bytes never breaks a branch target. Blocks shorter than a 5-byte
// jump get a 2-byte jump to an "island" (a 5-byte jump) placed in free bytes
// within reach: the tail of a relocated neighbour or inter-function padding.
// endbr64 at a block start is kept in place. Blocks that fit neither tactic
// are left alone and counted.
package patch

import (
	"fmt"
	"os"
	"regexp"
	"sort"

	"hgrewrite/abi"
	"hgrewrite/cfg"
	"hgrewrite/disasm"

	"golang.org/x/arch/x86/x86asm"
)

// Layout says where the new segments will be loaded.
type Layout struct {
	TextAddr   uint64 // the trampoline segment
	SlotAccess uint64 // 8-byte slot holding the runtime's access entry point
	SlotRange  uint64 // 8-byte slot holding the runtime's range entry point
	SlotBatch  uint64 // 8-byte slot holding the runtime's batch entry point
	SlotTrace  uint64 // 8-byte slot holding the call trace's TLS offset (abi.HdrOffSlotTrace)
	PIE        bool   // code is position-independent: no absolute addresses
}

// Options select what is instrumented.
type Options struct {
	InstrumentStack bool   // also rsp-based and frame-pointer accesses
	Hooks           *Hooks // loop hooks (hooks.go); nil for none
	// ReadOnly are the link-time ranges that are never written while
	// threads run: segments without write permission and the RELRO
	// range (written by the loader before main). A RIP-relative read
	// there needs no check: nothing can race with it.
	ReadOnly []Range
	// Redundant are accesses whose checks an earlier access on every path
	// to them makes redundant (package elide): not instrumented.
	Redundant map[uint64]bool
	// Batches numbers the accesses that one runtime call may check
	// together, at the first of them (elide.Batches): a group's number
	// for each member.
	Batches map[uint64]int
	// TraceCalls puts the call-trace glue at every function's entry
	// (trace.go): reports then restore an earlier access's callers.
	TraceCalls bool
}

// Range is the half-open address range [Start, End).
type Range struct{ Start, End uint64 }

func inRanges(rs []Range, a, n uint64) bool {
	for _, r := range rs {
		if r.Start <= a && a+n <= r.End {
			return true
		}
	}
	return false
}

// Patch is a run of original code bytes to overwrite.
type Patch struct {
	Addr  uint64
	Bytes []byte
}

// Stats counts what the patcher did.
type Stats struct {
	Instructions int            // decoded, all executable sections
	MemInsts     int            // with a memory access, in instrumented sections
	Instrumented int            // memory instructions that now call the runtime
	Skipped      map[string]int // memory instructions not instrumented, by reason
	Tactics      TacticCounts   // patched blocks, by tactic (tactic.go)
	Hooks        int            // loop hooks placed
	HooksSkipped int            // loop hooks whose block could not be relocated
	Batched      int            // instrumented accesses checked by an earlier one's batch call (elide.Batches)
	Traced       int            // functions whose entry appends to the call trace (Options.TraceCalls)
	CallsKept    int            // calls ending a relocated block that run where they are (keepsCall)
	TraceSkipped int            // functions whose entry block could not take the call-trace glue
}

// Result is the plan's output.
type Result struct {
	Text    []byte // trampoline segment contents, loaded at Layout.TextAddr
	RetStub uint64 // address of a bare `ret`: the slots' value before the runtime fills them
	Patches []Patch
	Stats   Stats
	// FailedHooks are the start addresses of blocks whose loop hooks
	// could not be placed (too short with no island in reach, not
	// relocatable, no unwind information).
	FailedHooks []uint64
	// FailedBlocks are the start addresses of blocks with accesses to
	// check that could not be patched: none of their accesses is
	// checked, so none may stand for a later one (elide.Input.Unchecked).
	FailedBlocks []uint64
}

// Skip reasons.
const (
	skipStack       = "stack (rsp/frame based)"
	skipTLS         = "thread-local (fs/gs)"
	skipUnsupported = "unsupported operand (VSIB or 32-bit address)"
	skipShort       = "block too short, no island in reach"
	skipReloc       = "block not relocatable"
	skipNoUnwind    = "code without unwind info"
	skipReadOnly    = "read of read-only data"
	skipRedundant   = "redundant (same access checked earlier on every path)"
)

// CodeReader returns n original bytes at addr.
type CodeReader func(addr, n uint64) []byte

type planned struct {
	block *cfg.Block
	start uint64 // first patched byte (after a leading endbr64)
	// end is past the last patched byte: the block's end, or the call
	// that ends the block when it stays where it is (keepsCall)
	end     uint64
	sites   int
	hooks   int    // loop hooks the block carries
	tramp   uint64 // trampoline address
	batched int    // accesses checked by a batch call at an earlier one (Stats.Batched)
	island  uint64 // island address, short blocks only
	traced  bool   // a function's entry: the call-trace glue goes first
}

// Rewrite builds the trampolines and the code patches for graph g.
func Rewrite(g *cfg.Graph, code CodeReader, lay Layout, opt Options) (*Result, error) {
	t, err := getTemplates()
	if err != nil {
		return nil, err
	}
	b := &builder{g: g, code: code, lay: lay, opt: opt, t: t, leaCache: map[disasm.MemOp][]byte{}, asmCache: map[string][]byte{},
		res: &Result{Stats: Stats{Skipped: map[string]int{}, Tactics: map[string]int{}}}}
	b.res.Text = put(nil, t.ret, 0)
	b.res.RetStub = lay.TextAddr
	for _, s := range g.Sections {
		b.res.Stats.Instructions += len(s.Insts)
	}
	var long, short []*planned
	for bi := range g.Blocks {
		blk := &g.Blocks[bi]
		p, ok := b.plan(blk)
		if !ok {
			continue
		}
		if err := b.trampoline(p); err != nil {
			if debugReloc {
				fmt.Fprintf(os.Stderr, "block %#x: %v\n", blk.Start, err)
			}
			b.res.Stats.Skipped[skipReloc] += p.sites
			b.failPlanned(p)
			continue
		}
		if fitsJmp32(p) {
			long = append(long, p)
		} else {
			short = append(short, p)
		}
	}
	b.place(long, short)
	sort.Slice(b.res.Patches, func(i, j int) bool { return b.res.Patches[i].Addr < b.res.Patches[j].Addr })
	return b.res, nil
}

type builder struct {
	g        *cfg.Graph
	code     CodeReader
	lay      Layout
	opt      Options
	t        *templates
	res      *Result
	leaCache map[disasm.MemOp][]byte
	asmCache map[string][]byte // batchGlue's pieces (asm)
}

// failPlanned counts what a planned block that could not be patched
// loses: its loop hooks (patched again without them) and its entry's
// call trace (not traced: nothing else depends on it).
func (b *builder) failPlanned(p *planned) {
	if p.sites > 0 {
		b.res.FailedBlocks = append(b.res.FailedBlocks, p.block.Start)
	}
	if p.hooks > 0 {
		b.failHooks(p.block)
	}
	if p.traced {
		b.res.Stats.TraceSkipped++
	}
}

func (b *builder) failHooks(blk *cfg.Block) {
	b.res.FailedHooks = append(b.res.FailedHooks, blk.Start)
	b.res.Stats.HooksSkipped += b.hookCount(blk.Start, blk.End, b.g.Insts(blk))
}

// plan decides whether a block is worth relocating and counts its sites.
func (b *builder) plan(blk *cfg.Block) (*planned, bool) {
	if !blk.Reached || !b.g.Sections[blk.Sec].Instrument {
		return nil, false
	}
	p := &planned{block: blk, start: blk.Start}
	insts := b.g.Insts(blk)
	for i := range insts {
		in := &insts[i]
		if in.Flags&disasm.HasMem == 0 {
			continue
		}
		b.res.Stats.MemInsts++
		if b.g.HasUnwind && !blk.Unwound {
			// Compilers describe every function they emit in .eh_frame;
			// code without it is hand-written or generated (V8's embedded
			// builtins) and may be entered at addresses no table shows.
			b.res.Stats.Skipped[skipNoUnwind]++
			continue
		}
		if why := b.skipReason(blk, in); why != "" {
			b.res.Stats.Skipped[why]++
			continue
		}
		p.sites++
	}
	if b.g.HasUnwind && !blk.Unwound {
		p.hooks = 0
		if b.blockHooks(blk.Start, insts) {
			b.failHooks(blk)
		}
	} else {
		p.hooks = b.hookCount(blk.Start, blk.End, insts)
	}
	p.traced = b.traced(blk)
	if p.sites == 0 && p.hooks == 0 && !p.traced {
		return nil, false
	}
	if isEndbr(b.code(insts[0].Addr, uint64(insts[0].Len))) {
		p.start += uint64(insts[0].Len)
	}
	p.end = blk.End
	if b.keepsCall(blk, insts, p.start) {
		p.end = insts[len(insts)-1].Addr
	}
	if p.end-p.start < jmp8Len {
		b.res.Stats.Skipped[skipShort] += p.sites
		b.failPlanned(p)
		return nil, false
	}
	return p, true
}

// keepsCall says whether the call that ends blk may stay where it is:
// the trampoline jumps back to it instead of emulating it with a pushed
// return address and a jump. A return then goes where the call's
// own push said, as the processor's return predictor expects: an
// emulated call's callee mispredicted its return every time
// (bench/calls.c). The bytes before the call must hold the patch's jump,
// and nothing may be hooked at the call or after it (a hook runs in the
// trampoline).
func (b *builder) keepsCall(blk *cfg.Block, insts []disasm.Inst, start uint64) bool {
	last := &insts[len(insts)-1]
	if last.Kind != disasm.Call && last.Kind != disasm.CallInd || last.Addr < start+jmp8Len {
		return false
	}
	h := b.opt.Hooks
	if h.waitCall(last.Addr) || h.request(last.Addr) {
		return false
	}
	if _, ok := h.lockCall(last.Addr); ok {
		return false
	}
	if _, ok := h.annotation(last.Addr); ok {
		return false
	}
	_, ok := fallExit(h.exits(blk.Start), blk.End)
	return !ok
}

// traced says whether blk is a function's entry block that takes the
// call-trace glue: code the unwind information covers, as for accesses,
// and not the cold part of a function (GCC's and Clang's "f.cold",
// "f.cold.1"), which its function jumps to and exception handling enters
// as a landing pad: no call, no return address on the stack.
func (b *builder) traced(blk *cfg.Block) bool {
	return b.opt.TraceCalls && blk.Func >= 0 && b.g.Funcs[blk.Func].Start == blk.Start &&
		(!b.g.HasUnwind || blk.Unwound) && !coldPart.MatchString(b.g.Funcs[blk.Func].Name)
}

var coldPart = regexp.MustCompile(`\.cold(\.\d+)?$`)

func isEndbr(c []byte) bool {
	return len(c) == 4 && c[0] == 0xf3 && c[1] == 0x0f && c[2] == 0x1e && (c[3] == 0xfa || c[3] == 0xfb)
}

// skipReason says why a memory instruction is not instrumented, or "".
func (b *builder) skipReason(blk *cfg.Block, in *disasm.Inst) string {
	if why := b.operandSkip(blk, in); why != "" {
		return why
	}
	if b.opt.Redundant[in.Addr] {
		return skipRedundant
	}
	return ""
}

// operandSkip is skipReason for what the operand itself decides.
func (b *builder) operandSkip(blk *cfg.Block, in *disasm.Inst) string {
	switch {
	case in.Flags&disasm.TLSMem != 0:
		return skipTLS
	case in.Flags&disasm.Unsupported != 0:
		return skipUnsupported
	case in.Flags&disasm.RIPRel != 0 && in.Mem.Access&disasm.Write == 0 &&
		inRanges(b.opt.ReadOnly, in.Target, uint64(max(in.Mem.Size, 1))):
		return skipReadOnly
	case b.opt.InstrumentStack:
		return ""
	case in.Flags&disasm.StackMem != 0:
		return skipStack
	case in.Flags&disasm.FrameMem != 0 && blk.Func >= 0 && b.g.Funcs[blk.Func].FramePointer:
		return skipStack
	}
	return ""
}

// trampoline appends the relocated, instrumented copy of a block.
func (b *builder) trampoline(p *planned) error {
	base := b.lay.TextAddr
	mark := len(b.res.Text)
	for len(b.res.Text)%16 != 0 {
		b.res.Text = append(b.res.Text, 0xcc)
	}
	p.tramp = base + uint64(len(b.res.Text))
	insts := b.g.Insts(p.block)
	var err error
	buf := b.res.Text
	var last *disasm.Inst
	var stub *exitStub
	exits := b.opt.Hooks.exits(p.block.Start)
	batches := b.batchesOf(p, insts)
	for i := range insts {
		in := &insts[i]
		if in.Addr < p.start {
			continue
		}
		if p.traced && in.Addr == p.start {
			if buf, err = b.entryGlue(buf, p.block.Start); err != nil {
				break
			}
		}
		if b.opt.Hooks.waitCall(in.Addr) {
			if buf, err = b.hookGlue(buf, in.Addr, abi.HookWait, Value{}); err != nil {
				break
			}
		}
		if v, ok := b.opt.Hooks.lockCall(in.Addr); ok {
			if buf, err = b.hookGlue(buf, in.Addr, abi.HookLock, v); err != nil {
				break
			}
		}
		if k, ok := b.opt.Hooks.annotation(in.Addr); ok {
			if buf, err = b.annotateGlue(buf, k); err != nil {
				break
			}
		}
		if b.opt.Hooks.request(in.Addr) {
			if buf, err = b.requestGlue(buf, in.Addr); err != nil {
				break
			}
		}
		if in.Flags&disasm.HasMem != 0 && b.skipReason(p.block, in) == "" {
			if group, ok := batches[in.Addr]; !ok {
				buf, err = b.glue(buf, in, b.flagsDeadOn(insts, i))
			} else if group != nil {
				buf, err = b.batchGlue(buf, group, b.flagsDeadOn(insts, i))
			}
			if err != nil {
				break
			}
		}
		if in.Addr == p.end { // the call stays: back to it (keepsCall)
			buf, err = putRel(buf, base, b.t.jmpRel, in.Addr)
			last = nil
			break
		}
		if buf, err = b.relocate(buf, in); err != nil {
			break
		}
		if i == len(insts)-1 {
			if h, ok := branchExit(exits, in); ok {
				stub = &exitStub{rel32: len(buf) - 4, hook: h}
			}
		}
		if in.Flags&disasm.HasMem != 0 && in.Mem.Access&disasm.Atomic != 0 && b.skipReason(p.block, in) == "" {
			// The acquire half of an atomic read-modify-write is after it.
			if buf, err = b.postGlue(buf, in, b.flagsDeadOn(insts, i+1)); err != nil {
				break
			}
		}
		last = in
	}
	if err == nil && last != nil && fallsThrough(last.Kind) {
		if h, ok := fallExit(exits, p.block.End); ok {
			buf, err = b.hookGlue(buf, h.To, abi.HookExit, h.Value)
		}
		if err == nil {
			buf, err = putRel(buf, base, b.t.jmpRel, p.block.End)
		}
	}
	if err == nil && stub != nil {
		buf, err = b.placeStub(buf, *stub)
	}
	if err != nil {
		b.res.Text = b.res.Text[:mark]
		return err
	}
	b.res.Text = buf
	return nil
}

func fallsThrough(k disasm.Kind) bool {
	switch k {
	case disasm.Jmp, disasm.JmpInd, disasm.Ret, disasm.Stop:
		return false
	}
	return true
}

// flagsDead reports whether the arithmetic flags are overwritten before
// they are read, from the first of insts on, within the block. Then the
// glue in front of insts[0] need not save them (pushf/popf are slow).
func flagsDead(insts []disasm.Inst) bool {
	dead, _ := flagsScan(insts)
	return dead // unknown at the block's end: the next block may read them
}

// flagsScan is flagsFate over insts: the first instruction that decides.
func flagsScan(insts []disasm.Inst) (dead, known bool) {
	for i := range insts {
		if dead, known := flagsFate(&insts[i]); known {
			return dead, true
		}
	}
	return false, false
}

// flagsFollow bounds the instructions flagsDeadOn looks at past a block.
const flagsFollow = 16

// flagsDeadOn is flagsDead for insts[i:] of a block, going on where the
// code goes: through a direct jump, and into the next block when the
// block falls through. The path from an instruction is one until a
// conditional branch, which reads the flags.
func (b *builder) flagsDeadOn(insts []disasm.Inst, i int) bool {
	if dead, known := flagsScan(insts[i:]); known || len(insts) == 0 {
		return dead
	}
	in := &insts[len(insts)-1]
	for range flagsFollow {
		next := in.Addr + uint64(in.Len)
		switch in.Kind {
		case disasm.Jmp:
			next = in.Target
		case disasm.Other, disasm.Nop:
		default:
			return false
		}
		var ok bool
		if in, ok = b.g.Inst(next); !ok {
			return false
		}
		if dead, known := flagsFate(in); known {
			return dead
		}
	}
	return false
}

// flagsFate is what in says of the flags: dead (it overwrites them),
// live (it may read them), or nothing yet (known false): it leaves them,
// or it is a direct jump, after which the code goes on at its target.
func flagsFate(in *disasm.Inst) (dead, known bool) {
	switch in.FlagsUse() {
	case disasm.FlagsKill:
		return true, true
	case disasm.FlagsUnknown:
		return false, in.Kind != disasm.Jmp
	}
	return false, false
}

// glue appends the runtime call(s) for one memory instruction.
func (b *builder) glue(buf []byte, in *disasm.Inst, noFlags bool) ([]byte, error) {
	base := b.lay.TextAddr
	if in.Flags&disasm.StringOp != 0 {
		return b.stringGlue(buf, in)
	}
	saved := uint64(savedBytes)
	enter, leave := b.t.enter, b.t.leave
	if noFlags {
		saved -= 8
		enter, leave = b.t.enterNF, b.t.leaveNF
	}
	lea, err := b.lea(in, saved)
	if err != nil {
		return buf, err
	}
	buf = put(buf, enter, 0)
	if in.Mem.Base == x86asm.RIP {
		if buf, err = putRel(buf, base, b.t.leaRIP, in.Target); err != nil {
			return buf, err
		}
	} else {
		buf = append(buf, lea...)
	}
	buf = put(buf, b.t.info, int64(abi.Info(in.Addr, in.Mem.Size, accessFlags(in.Mem.Access))))
	if buf, err = putRel(buf, base, b.t.callSlot, b.lay.SlotAccess); err != nil {
		return buf, err
	}
	return put(buf, leave, 0), nil
}

// postGlue appends the call after an atomic instruction.
func (b *builder) postGlue(buf []byte, in *disasm.Inst, noFlags bool) ([]byte, error) {
	enter, leave := b.t.enter, b.t.leave
	if noFlags {
		enter, leave = b.t.enterNF, b.t.leaveNF
	}
	buf = put(buf, enter, 0)
	buf = put(buf, b.t.info, int64(abi.Info(in.Addr, in.Mem.Size, accessFlags(in.Mem.Access)|abi.Post)))
	var err error
	if buf, err = putRel(buf, b.lay.TextAddr, b.t.callSlot, b.lay.SlotAccess); err != nil {
		return buf, err
	}
	return put(buf, leave, 0), nil
}

func accessFlags(a disasm.Access) uint16 {
	var f uint16
	if a&disasm.Read != 0 {
		f |= abi.Read
	}
	if a&disasm.Write != 0 {
		f |= abi.Write
	}
	if a&disasm.Atomic != 0 {
		f |= abi.Atomic
	}
	if a&disasm.Spin != 0 {
		f |= abi.Spin
	}
	if a&disasm.Ordered != 0 {
		f |= abi.Spin | abi.Ordered
	}
	if a&disasm.SpinStatic != 0 {
		f |= abi.SpinStatic
	}
	return f
}

// stringGlue reports the ranges a string instruction touches: [rsi] and/or
// [rdi], element size times rcx for rep (one element for repe/repne, whose
// real count depends on the data, and without rep). Direction flag set
// (backwards copies) is not modelled: the range is taken upwards.
func (b *builder) stringGlue(buf []byte, in *disasm.Inst) ([]byte, error) {
	type side struct {
		src bool
		acc disasm.Access
	}
	var sides []side
	if in.Flags&disasm.StrSrc != 0 {
		sides = append(sides, side{true, disasm.Read})
	}
	if in.Flags&disasm.StrDst != 0 {
		acc := in.Mem.Access
		if in.Flags&disasm.StrSrc != 0 && acc&disasm.Write != 0 {
			acc = disasm.Write // movs: reads [rsi], writes [rdi]
		}
		sides = append(sides, side{false, acc})
	}
	var err error
	for _, s := range sides {
		buf = put(buf, b.t.enterRange, 0)
		if s.src {
			buf = put(buf, b.t.srcToRdi, 0)
		}
		buf = put(buf, b.t.info, int64(abi.Info(in.Addr, in.Mem.Size, accessFlags(s.acc))))
		if in.Flags&disasm.Rep != 0 && in.Flags&disasm.RepCond == 0 {
			buf = put(buf, b.t.countRcx, 0)
		} else {
			buf = put(buf, b.t.countOne, 0)
		}
		if buf, err = putRel(buf, b.lay.TextAddr, b.t.callSlot, b.lay.SlotRange); err != nil {
			return buf, err
		}
		buf = put(buf, b.t.leaveRange, 0)
	}
	return buf, nil
}

// savedBytes is how far rsp has moved when the glue computes an address:
// the red zone plus flags, rdi and rsi.
const savedBytes = abi.TrampolineSaved

// lea assembles `lea <operand>, %rdi` for a non-RIP operand; saved is how
// far the glue has moved rsp.
func (b *builder) lea(in *disasm.Inst, saved uint64) ([]byte, error) {
	m := in.Mem
	if m.Base == x86asm.RIP {
		return nil, nil
	}
	if m.Base == x86asm.RSP {
		m.Disp += int64(saved)
		if in.Op == x86asm.POP {
			m.Disp += 8 // pop computes its destination after incrementing rsp
		}
	}
	key := disasm.MemOp{Base: m.Base, Index: m.Index, Scale: m.Scale, Disp: m.Disp}
	if code, ok := b.leaCache[key]; ok {
		return code, nil
	}
	var baseR, idxR int16
	var ok bool
	if m.Base != 0 {
		if baseR, ok = goReg(m.Base); !ok {
			return nil, fmt.Errorf("base register %v", m.Base)
		}
	}
	if m.Index != 0 {
		if idxR, ok = goReg(m.Index); !ok {
			return nil, fmt.Errorf("index register %v", m.Index)
		}
	}
	if m.Disp != int64(int32(m.Disp)) {
		return nil, fmt.Errorf("displacement %#x", m.Disp)
	}
	a := newAssembler()
	scale := int16(m.Scale)
	if idxR == 0 {
		scale = 0
	} else if scale == 0 {
		scale = 1
	}
	a.add(leaq, mem(baseR, idxR, scale, m.Disp), reg(regDI))
	code, _, err := a.assemble()
	if err != nil {
		return nil, err
	}
	b.leaCache[key] = code
	return code, nil
}

var debugReloc = os.Getenv("HG_DEBUG_RELOC") != ""

// batchesOf is the batches of the trampoline's instructions (from
// p.start on): for the first instrumented member of each group that has
// two or more, the group's instrumented members; for its other members,
// nil (their check is the first's). A member an earlier trampoline of the
// block holds, or that is not instrumented, is left out; a group's
// members after its first may be checked from any of them on.
func (b *builder) batchesOf(p *planned, insts []disasm.Inst) map[uint64][]*disasm.Inst {
	p.batched = 0
	if len(b.opt.Batches) == 0 {
		return nil
	}
	groups := map[int][]*disasm.Inst{}
	var order []int
	for i := range insts {
		in := &insts[i]
		g, ok := b.opt.Batches[in.Addr]
		if !ok || in.Addr < p.start || in.Flags&disasm.HasMem == 0 || b.skipReason(p.block, in) != "" {
			continue
		}
		if _, seen := groups[g]; !seen {
			order = append(order, g)
		}
		groups[g] = append(groups[g], in)
	}
	out := map[uint64][]*disasm.Inst{}
	for _, g := range order {
		members := groups[g]
		if len(members) < 2 {
			continue
		}
		out[members[0].Addr] = members
		for _, in := range members[1:] {
			out[in.Addr] = nil
		}
		p.batched += len(members) - 1
	}
	return out
}

// batchGlue appends one runtime call that checks a batch's accesses:
// their (address, info) pairs go on the stack, below the saved registers,
// and the batch entry point is called with the pairs and their number.
// An address computed from rdi or rsi after the first takes the
// register's saved value back first.
func (b *builder) batchGlue(buf []byte, members []*disasm.Inst, noFlags bool) ([]byte, error) {
	saved := uint64(savedBytes)
	enter, leave := b.t.enter, b.t.leave
	if noFlags {
		saved -= 8
		enter, leave = b.t.enterNF, b.t.leaveNF
	}
	pairs := int64(16 * len(members))
	buf = put(buf, enter, 0)
	var err error
	if buf, err = b.asm(buf, func(a *assembler) { a.add(leaq, mem(regSP, 0, 0, -pairs), reg(regSP)) }); err != nil {
		return buf, err
	}
	for k, in := range members {
		for _, r := range []struct {
			reg  x86asm.Reg
			go_  int16
			slot int64
		}{{x86asm.RDI, regDI, pairs + 8}, {x86asm.RSI, regSI, pairs}} {
			if k > 0 && (in.Mem.Base == r.reg || in.Mem.Index == r.reg) {
				if buf, err = b.asm(buf, func(a *assembler) { a.add(movq, mem(regSP, 0, 0, r.slot), reg(r.go_)) }); err != nil {
					return buf, err
				}
			}
		}
		if in.Mem.Base == x86asm.RIP {
			buf, err = putRel(buf, b.lay.TextAddr, b.t.leaRIP, in.Target)
		} else {
			var lea []byte
			if lea, err = b.lea(in, saved+uint64(pairs)); err == nil {
				buf = append(buf, lea...)
			}
		}
		if err != nil {
			return buf, err
		}
		buf = put(buf, b.t.info, int64(abi.Info(in.Addr, in.Mem.Size, accessFlags(in.Mem.Access))))
		off := int64(16 * k)
		if buf, err = b.asm(buf, func(a *assembler) {
			a.add(movq, reg(regDI), mem(regSP, 0, 0, off))
			a.add(movq, reg(regSI), mem(regSP, 0, 0, off+8))
		}); err != nil {
			return buf, err
		}
	}
	if buf, err = b.asm(buf, func(a *assembler) {
		a.add(movq, reg(regSP), reg(regDI))
		a.add(movl, imm(int64(len(members))), reg(regSI))
	}); err != nil {
		return buf, err
	}
	if buf, err = putRel(buf, b.lay.TextAddr, b.t.callSlot, b.lay.SlotBatch); err != nil {
		return buf, err
	}
	if buf, err = b.asm(buf, func(a *assembler) { a.add(leaq, mem(regSP, 0, 0, pairs), reg(regSP)) }); err != nil {
		return buf, err
	}
	return put(buf, leave, 0), nil
}

// asm appends the code f assembles (no patchable fields), assembled once
// per distinct code: batchGlue's moves and stack adjustments repeat.
func (b *builder) asm(buf []byte, f func(a *assembler)) ([]byte, error) {
	a := newAssembler()
	f(a)
	key := fmt.Sprint(progText(a))
	if code, ok := b.asmCache[key]; ok {
		return append(buf, code...), nil
	}
	code, _, err := a.assemble()
	if err != nil {
		return buf, err
	}
	b.asmCache[key] = code
	return append(buf, code...), nil
}

// progText describes an assembler's instructions, as a cache key.
func progText(a *assembler) []string {
	var out []string
	for p := a.first; p != nil; p = p.Link {
		out = append(out, fmt.Sprintf("%v %v %v %v %v %v|%v %v %v %v", p.As, p.From.Type, p.From.Reg, p.From.Index, p.From.Scale, p.From.Offset, p.To.Type, p.To.Reg, p.To.Index, p.To.Offset))
	}
	return out
}
