package elide

import (
	"slices"
	"strings"

	"hgrewrite/cfg"
	"hgrewrite/disasm"
)

// flow is the control flow the analysis follows between blocks: per block,
// the blocks with an edge into it that the analysis runs (preds), and
// whether they are all the ways in (closed): not
// an entry, not the target of a block the analysis does not run, of a
// backward edge or of an undecodable instruction's fall-through, in a
// function the graph knows and that has no indirect jump, and with no
// loop-exit hook on an incoming edge. The lists are packed (one array
// and offsets: the graph of a large program has millions of blocks).
//
// A backward edge (to a block that starts at or before the edge's own
// block) closes its target, so what the analysis carries only moves
// forward in the code (one pass in address order settles it) and no
// loop passes a check from one iteration to the next:
// the checks it leaves out are repeats within one iteration of a loop,
// or within straight-line code, as IFRit's regions are. A loop may poll
// a word another thread releases with plain stores (a relaxed atomic,
// which compiles to a plain load) and only its first check would be
// left, losing the acquires of the later iterations.
type flow struct {
	preds  edges
	closed []bool
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

// start is what block bi inherits: what every predecessor leaves (each
// has run: it starts before bi); nothing for a block that is not closed.
func (f *flow) start(bi int, end [][]checked) []checked {
	if !f.closed[bi] {
		return nil
	}
	preds := f.preds.of(bi)
	acc := slices.Clone(end[preds[0]])
	for _, p := range preds[1:] {
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
				both := x
				both.size = min(x.size, y.size)
				both.write = x.write && y.write
				out = append(out, both)
			}
		}
	}
	return reduce(out)
}

// reduce drops the accesses another one covers (covered): a meet of
// two predecessors' lists pairs each access with every access of the
// same location, and the list would otherwise grow with every join.
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
