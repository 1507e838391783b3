package loops

import (
	"fmt"

	"hgrewrite/disasm"
)

// Callee summaries for the spinning-read analysis: a small function of the
// binary that a loop calls is looked into instead of being assumed to
// clobber every caller-saved register. calleeGraph builds (once per
// function) its graph and the registers it writes; calleeFrame lets the
// backward evaluator walk into it, calleeValue evaluates its return value.

// calleeValue is the return value of the direct call at instruction i.
func (fr *frame) calleeValue(l, i int, in *disasm.Inst) sv {
	cf, why := fr.calleeFrame(l, i, in)
	if why != "" {
		return badf("%s", why)
	}
	var out sv
	first := true
	for cl := range cf.fg.blocks {
		insts := cf.insts(cl)
		last := &insts[len(insts)-1]
		if last.Kind != disasm.Ret {
			continue
		}
		v := cf.eval(loc{kind: lReg, reg: rAX}, cl, len(insts)-1)
		if v.bad != "" {
			return badf("%s returns %s", cf.fn, v.bad)
		}
		if first {
			out, first = v, false
		} else {
			out = merge(out, v)
		}
	}
	if first {
		return badf("%s never returns", cf.fn)
	}
	return out
}

// callClobbers is the set of registers (and flags) the direct call in may
// change: for a small callee the analysis can look into, the registers it
// actually writes (gcc's -fipa-ra lets callers keep values in caller-saved
// registers across such calls); otherwise all caller-saved ones.
func (a *analyzer) callClobbers(in *disasm.Inst) uint32 {
	if _, imp := a.in.PLT[in.Target]; imp {
		return callerSaved | flagMask
	}
	fi := a.funcAt(in.Target)
	if fi < 0 {
		return callerSaved | flagMask
	}
	ci := a.calleeGraph(fi)
	if ci.why != "" {
		return callerSaved | flagMask
	}
	return ci.clobbers
}

// calleeInfo is a small function of the binary the spin analysis can look
// into.
type calleeInfo struct {
	fg       *fgraph
	why      string
	clobbers uint32 // registers and flags it may change
}

func (a *analyzer) calleeGraph(fi int) *calleeInfo {
	if ci, ok := a.callee[fi]; ok {
		return ci
	}
	ci := &calleeInfo{}
	a.callee[fi] = ci
	g := a.g
	f := &g.Funcs[fi]
	name := f.Name
	if name == "" {
		name = fmt.Sprintf("0x%x", f.Start)
	}
	if len(f.Blocks) == 0 || g.Blocks[f.Blocks[0]].Start != f.Start {
		ci.why = "callee " + name + " not decoded"
		return ci
	}
	n := 0
	idx := map[uint64]int{}
	for l, b := range f.Blocks {
		idx[g.Blocks[b].Start] = l
		n += g.Blocks[b].Last - g.Blocks[b].First + 1
	}
	if n > a.opt.CalleeInsts {
		ci.why = fmt.Sprintf("callee %s has %d instructions", name, n)
		return ci
	}
	fg := &fgraph{fi: fi, fp: f.FramePointer, blocks: f.Blocks,
		succ: make([][]int, len(f.Blocks)), pred: make([][]int, len(f.Blocks))}
	for l, b := range f.Blocks {
		blk := &g.Blocks[b]
		for i, in := range g.Insts(blk) {
			if in.Kind == disasm.Call || in.Kind == disasm.CallInd {
				ci.clobbers |= callerSaved | flagMask
			} else {
				ci.clobbers |= regWrites(&g.Insts(blk)[i], a.inst(&g.Insts(blk)[i]))
			}
			switch in.Kind {
			case disasm.Call:
				if _, ok := a.in.PLT[in.Target]; !ok {
					ci.why = "callee " + name + " calls other functions"
					return ci
				}
			case disasm.CallInd:
				if in.Flags&disasm.RIPRel == 0 || a.in.GOT[in.Target] == "" {
					ci.why = "callee " + name + " makes indirect calls"
					return ci
				}
			case disasm.JmpInd, disasm.Bad:
				ci.why = "callee " + name + " has an indirect jump"
				return ci
			}
		}
		for _, s := range blk.Succs {
			t, ok := idx[s]
			if !ok {
				ci.why = "callee " + name + " jumps out of itself"
				return ci
			}
			fg.succ[l] = append(fg.succ[l], t)
			fg.pred[t] = append(fg.pred[t], l)
		}
	}
	ci.fg = fg
	// Callee-saved registers are restored (the ABI); rax is the result.
	ci.clobbers = ci.clobbers&callerSaved | 1<<rAX | flagMask
	return ci
}

// calleeFrame is the frame for the direct call at instruction i.
func (fr *frame) calleeFrame(l, i int, in *disasm.Inst) (*frame, string) {
	a := fr.sa.a
	if fr.header < 0 {
		return nil, "nested call"
	}
	fi := a.funcAt(in.Target)
	if fi < 0 {
		return nil, fmt.Sprintf("call to 0x%x, not a known function", in.Target)
	}
	ci := a.calleeGraph(fi)
	if ci.why != "" {
		return nil, ci.why
	}
	name := a.g.Funcs[fi].Name
	if name == "" {
		name = fmt.Sprintf("0x%x", in.Target)
	}
	return &frame{sa: fr.sa, fg: ci.fg, fn: name, header: -1, entry: 0, fp: ci.fg.fp,
		rspOK: true, parent: fr, callL: l, callI: i}, ""
}
