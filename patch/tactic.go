package patch

import (
	"encoding/binary"
	"sort"
)

// A patch tactic is how the original code of a relocated block reaches its
// trampoline. Rewrite relocates every block it instruments, then gives each
// one the first tactic that fits:
//
//   - jmp32: the block's first five bytes (after a leading endbr64) become
//     `jmp rel32` to the trampoline and the rest int3;
//   - jmp8+island: a block too short for that gets a 2-byte `jmp rel8` to an
//     island, a 5-byte `jmp rel32` to the trampoline placed in free bytes
//     within reach (the int3 tail of a jmp32 block, or padding between
//     functions).
//
// A block that fits neither is left as it was and its accesses are counted
// in Stats.Skipped (skipShort). Stats.Tactics counts the blocks of each
// tactic; the names are what --stats prints.

// Tactic is a patch tactic; its name is its key in Stats.Tactics.
type Tactic string

// The patch tactics.
const (
	TacticJmp32      Tactic = "jmp32"
	TacticJmp8Island Tactic = "jmp8+island"
)

// TacticCounts counts the patched blocks by tactic name. It is a
// map[string]int underneath, so code written for the plain map (printing
// sorted keys) keeps working.
type TacticCounts map[string]int

func (c TacticCounts) add(t Tactic) { c[string(t)]++ }

// Sizes of the jumps the tactics write.
const (
	jmp32Len = 5 // e9 rel32
	jmp8Len  = 2 // eb rel8
)

// fitsJmp32 reports whether the patchable bytes of p hold a 5-byte jump.
func fitsJmp32(p *planned) bool { return p.end-p.start >= jmp32Len }

// place patches the original code of the relocated blocks: jmp32 for long,
// then jmp8+island for short, into the free bytes the first leave.
func (b *builder) place(long, short []*planned) {
	free := b.freeRanges(long)
	for _, p := range long {
		b.jump32(p.start, p.tramp, p.end)
		b.done(p, TacticJmp32)
	}
	for _, p := range short {
		switch {
		case b.island(p, free):
			b.done(p, TacticJmp8Island)
		case b.relocateCall(p):
			b.jump32(p.start, p.tramp, p.end)
			b.done(p, TacticJmp32)
		default:
			b.res.Stats.Skipped[skipShort] += p.sites
			b.failPlanned(p)
		}
	}
}

// relocateCall gives up keeping the call that ends a short block in place
// (keepsCall) when no island was in reach for the jump before it: the
// block gets a new trampoline, which emulates the call, and room for a
// 5-byte jump, if the whole block has it.
func (b *builder) relocateCall(p *planned) bool {
	if p.end == p.block.End || p.block.End-p.start < jmp32Len {
		return false
	}
	p.end = p.block.End
	return b.trampoline(p) == nil
}

// done counts a block patched with tactic t.
func (b *builder) done(p *planned, t Tactic) {
	b.res.Stats.Tactics.add(t)
	b.res.Stats.Instrumented += p.sites
	b.res.Stats.Batched += p.batched
	b.res.Stats.Hooks += p.hooks
	if p.traced {
		b.res.Stats.Traced++
	}
	if p.end != p.block.End {
		b.res.Stats.CallsKept++
	}
}

// jump32 writes `jmp tramp` at from and fills the rest of the block with int3.
func (b *builder) jump32(from, tramp, end uint64) {
	b.res.Patches = append(b.res.Patches, Patch{Addr: from, Bytes: int3After(jmpRel32(from, tramp), end-from)})
}

// jmpRel32 is `jmp target` assembled at address at.
func jmpRel32(at, target uint64) []byte {
	j := make([]byte, jmp32Len)
	j[0] = 0xe9
	binary.LittleEndian.PutUint32(j[1:], uint32(int32(int64(target-(at+jmp32Len)))))
	return j
}

// int3After is n bytes: jump j, then int3 (nothing jumps into a patched
// block's tail; a stray jump there traps).
func int3After(j []byte, n uint64) []byte {
	buf := make([]byte, n)
	for i := range buf {
		buf[i] = 0xcc
	}
	copy(buf, j)
	return buf
}

// freeRange is a run of original code bytes nothing executes.
type freeRange struct{ start, end uint64 }

// freeRanges lists the bytes islands may go to: the tails of the jmp32
// blocks and the padding between functions, in address order.
func (b *builder) freeRanges(long []*planned) []freeRange {
	var fr []freeRange
	for _, p := range long {
		if p.end-p.start > jmp32Len {
			fr = append(fr, freeRange{p.start + jmp32Len, p.end})
		}
	}
	for i := range b.g.Blocks {
		blk := &b.g.Blocks[i]
		if blk.Padding && b.g.Sections[blk.Sec].Instrument {
			fr = append(fr, freeRange{blk.Start, blk.End})
		}
	}
	sort.Slice(fr, func(i, j int) bool { return fr[i].start < fr[j].start })
	return fr
}

// island places a 5-byte jump to the trampoline within rel8 reach of a short
// block and points the block's first bytes at it.
func (b *builder) island(p *planned, free []freeRange) bool {
	from := p.start + jmp8Len // rel8 is relative to the end of the 2-byte jump
	lo, hi := from-128, from+127
	i := sort.Search(len(free), func(i int) bool { return free[i].end >= lo+jmp32Len })
	for ; i < len(free) && free[i].start <= hi; i++ {
		f := &free[i]
		at := f.start
		if at < lo {
			at = lo
		}
		if at > hi || at+jmp32Len > f.end {
			continue
		}
		b.overlay(at, jmpRel32(at, p.tramp), f)
		jmp := []byte{0xeb, byte(int8(int64(at - from)))}
		b.res.Patches = append(b.res.Patches, Patch{Addr: p.start, Bytes: int3After(jmp, p.end-p.start)})
		return true
	}
	return false
}

// overlay writes an island into a free range, inside an existing patch when
// the range is the tail of a relocated block, and shrinks the range.
func (b *builder) overlay(at uint64, isl []byte, f *freeRange) {
	placed := false
	for i := range b.res.Patches {
		pt := &b.res.Patches[i]
		if at >= pt.Addr && at+uint64(len(isl)) <= pt.Addr+uint64(len(pt.Bytes)) {
			copy(pt.Bytes[at-pt.Addr:], isl)
			placed = true
			break
		}
	}
	if !placed {
		b.res.Patches = append(b.res.Patches, Patch{Addr: at, Bytes: isl})
	}
	// Keep the bytes before the island free only if the island sits at the
	// start; otherwise give up the head (simple and still correct).
	f.start = at + uint64(len(isl))
}
