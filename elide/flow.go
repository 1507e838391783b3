package elide

import (
	"strings"

	"hgrewrite/cfg"
	"hgrewrite/disasm"
)

// flow is the control flow the analysis follows between blocks: per block,
// the blocks with an edge into it that the analysis runs (preds) and those
// it leads to (succs), and whether preds are all the ways in (closed): not
// an entry, not the target of a block the analysis does not run, of a
// backward edge or of an undecodable instruction's fall-through, in a
// function the graph knows and that has no indirect jump, and with no
// loop-exit hook on an incoming edge. The lists are packed (one array
// and offsets: the graph of a large program has millions of blocks).
//
// A backward edge (to a block that starts at or before the edge's own
// block) closes nothing, so what the analysis carries only moves forward
// in the code and no loop passes a check from one iteration to the next:
// the checks it leaves out are repeats within one iteration of a loop,
// or within straight-line code, as IFRit's regions are. A loop may poll
// a word another thread releases with plain stores (a relaxed atomic,
// which compiles to a plain load) and only its first check would be
// left, losing the acquires of the later iterations.
type flow struct {
	preds, succs edges
	closed       []bool
}

// edges are lists per block: block bi's are to[at[bi]:at[bi+1]].
type edges struct {
	at []int32
	to []int32
}

func (e *edges) of(bi int) []int32 { return e.to[e.at[bi]:e.at[bi+1]] }

// pack makes edges of the pairs (from, to), listed under from.
func pack(n int, pairs [][2]int32) edges {
	e := edges{at: make([]int32, n+1), to: make([]int32, len(pairs))}
	for _, p := range pairs {
		e.at[p[0]+1]++
	}
	for i := 0; i < n; i++ {
		e.at[i+1] += e.at[i]
	}
	next := append([]int32(nil), e.at[:n]...)
	for _, p := range pairs {
		e.to[next[p[0]]] = p[1]
		next[p[0]]++
	}
	return e
}

func newFlow(in Input) *flow {
	g := in.Graph
	n := len(g.Blocks)
	f := &flow{closed: make([]bool, n)}
	indirect := indirectJumps(g)
	for bi := range g.Blocks {
		b := &g.Blocks[bi]
		f.closed[bi] = in.checks(bi) && !b.Entry && b.Func >= 0 && !indirect[b.Func] && (in.Unknown == nil || !in.Unknown(b.Start))
	}
	var pairs [][2]int32 // (to, from): the edges the analysis follows
	for bi := range g.Blocks {
		b := &g.Blocks[bi]
		insts := g.Insts(b)
		if insts[len(insts)-1].Kind == disasm.Bad {
			// it may be an instruction the decoder does not know, which
			// falls through at run time
			if si := g.BlockAt(b.End); si >= 0 && g.Blocks[si].Start == b.End {
				f.closed[si] = false
			}
		}
		open := !in.checks(bi) || (in.ExitHooked != nil && in.ExitHooked(b.Start))
		for _, s := range successors(g, b) {
			si := g.BlockAt(s)
			if si < 0 || g.Blocks[si].Start != s {
				continue
			}
			if open || s <= b.Start {
				f.closed[si] = false
			} else {
				pairs = append(pairs, [2]int32{int32(si), int32(bi)})
			}
		}
	}
	f.preds = pack(n, pairs)
	for i := range pairs {
		pairs[i][0], pairs[i][1] = pairs[i][1], pairs[i][0]
	}
	f.succs = pack(n, pairs)
	for bi := range f.closed {
		if len(f.preds.of(bi)) == 0 {
			f.closed[bi] = false
		}
	}
	return f
}

// indirectJumps are the functions with an indirect jump (or a jump to a
// retpoline thunk, which makes one): a jump table the graph did not
// recover jumps to blocks it does not know as entries, so none of their
// blocks inherits anything.
func indirectJumps(g *cfg.Graph) map[int]bool {
	thunks := map[uint64]bool{}
	for _, f := range g.Funcs {
		if strings.HasPrefix(f.Name, "__x86_indirect_thunk") || strings.HasPrefix(f.Name, "__x86_indirect_jump_thunk") {
			thunks[f.Start] = true
		}
	}
	out := map[int]bool{}
	for bi := range g.Blocks {
		b := &g.Blocks[bi]
		last := &g.Insts(b)[len(g.Insts(b))-1]
		if b.Func >= 0 && (last.Kind == disasm.JmpInd || last.Kind == disasm.Jmp && thunks[last.Target]) {
			out[b.Func] = true
		}
	}
	return out
}

// successors are the direct ways out of b: its Succs where the graph
// linked them (reached blocks), else what its last instruction says.
func successors(g *cfg.Graph, b *cfg.Block) []uint64 {
	if b.Reached {
		return b.Succs
	}
	insts := g.Insts(b)
	last := &insts[len(insts)-1]
	switch last.Kind {
	case disasm.Jmp:
		return []uint64{last.Target}
	case disasm.Jcc:
		return []uint64{last.Target, b.End}
	case disasm.Call, disasm.CallInd, disasm.Other, disasm.Nop:
		return []uint64{b.End}
	}
	return nil
}

// solve is, per block, the checked accesses available at its end, found
// by iterating to a fixed point from "everything" (the greatest solution
// of a forward must-analysis): a block runs once one of its predecessors
// did, and again whenever what one of them leaves changed. What a block
// inherits only shrinks from pass to pass, and run is monotone, so this
// settles; ok is false
// when it did not within maxRounds passes, and an unsettled guess may
// claim too much: no block may then inherit anything.
func (f *flow) solve(in Input, sts [][]step) (end [][]checked, known []bool, ok bool) {
	n := len(in.Graph.Blocks)
	end, known = make([][]checked, n), make([]bool, n)
	dirty := make([]bool, n)
	for bi := range dirty {
		dirty[bi] = in.checks(bi)
	}
	for round := 0; round <= maxRounds; round++ {
		changed := false
		for bi := range dirty {
			if !dirty[bi] {
				continue
			}
			dirty[bi] = false
			if f.closed[bi] && !f.anyKnown(bi, known) {
				continue // inherits everything so far: run once a predecessor ran
			}
			e := reduce(run(sts[bi], f.start(bi, end, known), nil))
			if known[bi] && same(end[bi], e) {
				continue
			}
			end[bi], known[bi], changed = e, true, true
			for _, s := range f.succs.of(bi) {
				dirty[s] = true
			}
		}
		if !changed {
			return end, known, true
		}
	}
	return nil, nil, false
}

// maxRounds bounds solve's passes.
const maxRounds = 100

// anyKnown: a predecessor of block bi ran.
func (f *flow) anyKnown(bi int, known []bool) bool {
	for _, p := range f.preds.of(bi) {
		if known[p] {
			return true
		}
	}
	return false
}

// start is what block bi inherits: what every predecessor leaves, a
// predecessor not run yet standing for everything; nothing for a block
// that is not closed.
func (f *flow) start(bi int, end [][]checked, known []bool) []checked {
	if !f.closed[bi] {
		return nil
	}
	var acc []checked
	first := true
	for _, p := range f.preds.of(bi) {
		if !known[p] {
			continue
		}
		if first {
			acc, first = append([]checked(nil), end[p]...), false
			continue
		}
		acc = meet(acc, end[p])
	}
	return acc
}

// meet is what a and b both make available: for each pair of accesses
// with the same address expression, the fewer bytes and the weaker kind
// of the two (reduced).
func meet(a, b []checked) []checked {
	var out []checked
	for _, x := range a {
		for _, y := range b {
			if x.key == y.key {
				x.size = min(x.size, y.size)
				x.write = x.write && y.write
				out = append(out, x)
			}
		}
	}
	return reduce(out)
}

// reduce drops the accesses another one covers (covered), so that two
// lists that make the same checks redundant are the same set (same): a
// pass that only rewrote the list would otherwise count as a change.
func reduce(a []checked) []checked {
	var out []checked
	for i, x := range a {
		dominated := false
		for j, y := range a {
			if i != j && x.key == y.key && y.size >= x.size && (y.write || !x.write) && (y != x || j < i) {
				dominated = true
				break
			}
		}
		if !dominated {
			out = append(out, x)
		}
	}
	return out
}

// same: a and b hold the same accesses, in any order (a meet keeps the
// order of its first operand, which may be another predecessor's in
// another round).
func same(a, b []checked) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		found := false
		for _, y := range b {
			if x == y {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}
