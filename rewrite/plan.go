package rewrite

import (
	"golang.org/x/arch/x86/x86asm"

	"hgrewrite/cfg"
	"hgrewrite/disasm"
	"hgrewrite/elfrw"
	"hgrewrite/loops"
	"hgrewrite/patch"
)

// LoopInput is the loop analysis's input over g, a graph of bin, as the
// rewriter builds it: it decodes in full only instructions of the graph.
func LoopInput(bin *elfrw.Binary, g *cfg.Graph) loops.Input {
	decode := func(addr uint64) (x86asm.Inst, bool) {
		in, ok := g.Inst(addr)
		if !ok || in.Kind == disasm.Bad {
			return x86asm.Inst{}, false
		}
		x, err := disasm.Full(bin.Bytes(addr, uint64(in.Len)))
		return x, err == nil
	}
	return loops.Input{Graph: g, Decode: decode, PLT: bin.PLT, GOT: bin.GOT}
}

// planLoops turns the loops found into instrumentation: the condition
// loads of spinning-read loops become acquires and the stores to the same
// global variables releases (disasm.Spin); every wait call in a wait loop
// gets a mark and every exit of a wait loop a hook (patch.Hooks).
func planLoops(li loops.Input, lr *loops.Result) *patch.Hooks {
	markSpins(li, lr)
	return planHooks(li, lr, nil)
}

// markSpins marks the spinning reads and their counterpart writes. The
// order matters: a store marked atomic is not marked again as a checked
// release.
func markSpins(li loops.Input, lr *loops.Result) {
	globals, locals := markSpinLoads(li.Graph, lr)
	// Stores to spin variables that are globals, wherever they are.
	for _, a := range loops.CounterpartStores(li, globals) {
		if in, ok := li.Graph.Inst(a); ok {
			in.Mem.Access |= disasm.Spin | disasm.Atomic
		}
	}
	// Their plain loads elsewhere acquire as the condition loads do: a
	// one-slot mailbox whose writer retries under the mutex until the slot
	// is empty spins on it, and the reader that polls it under the mutex
	// and takes the block out wrote the slot in its loop (no spin), so its
	// load of the slot was a plain read of a cell that the counterpart
	// stores never touch: its own, with no hand-off looked up, and the
	// block it was handed was reported.
	for _, a := range loops.SpinVarLoads(li, globals) {
		if in, ok := li.Graph.Inst(a); ok && in.Mem.Access&disasm.Atomic == 0 {
			in.Mem.Access |= disasm.Spin | disasm.Atomic | disasm.SpinStatic
		}
	}
	markArrayStores(li, lr)
	markLocalStores(li.Graph, locals)
}

// spinLocal is a spin variable reached through a register: the function
// of its load and the load's address expression.
type spinLocal struct {
	fn  int
	mem disasm.MemOp
}

// markSpinLoads makes the condition loads (and the loads before the loop)
// of spinning-read loops acquires, and returns the spin variables: the
// globals and those reached through a register.
func markSpinLoads(g *cfg.Graph, lr *loops.Result) ([]loops.Var, map[spinLocal]bool) {
	var globals []loops.Var
	locals := map[spinLocal]bool{}
	for _, s := range lr.Spins {
		size := spinSize(g, s)
		for _, c := range s.Consts {
			globals = append(globals, loops.Var{Addr: c, Size: size})
		}
		for _, a := range append(append([]uint64(nil), s.Loads...), s.GuardLoads...) {
			in, ok := g.Inst(a)
			if !ok || in.Flags&disasm.HasMem == 0 || in.Mem.Access&disasm.Write != 0 {
				continue // read-modify-writes are atomics already
			}
			in.Mem.Access |= disasm.Spin | disasm.Atomic
			if in.Flags&disasm.RIPRel != 0 {
				in.Mem.Access |= disasm.SpinStatic // its stores are marked by markSpins
			}
			if bi := g.BlockAt(a); in.Flags&disasm.RIPRel == 0 && bi >= 0 && g.Blocks[bi].Func >= 0 {
				locals[spinLocal{g.Blocks[bi].Func, addressOnly(in.Mem)}] = true
			}
		}
	}
	return globals, locals
}

// spinSize is the size of a spin variable: its condition load's (the
// largest, when the loop has several).
func spinSize(g *cfg.Graph, s loops.SpinLoop) uint64 {
	var size uint64 = 1
	for _, a := range s.Loads {
		if in, ok := g.Inst(a); ok {
			size = max(size, uint64(in.Mem.Size))
		}
	}
	return size
}

// markArrayStores marks the stores into a global array whose elements are
// spin variables (`flags[i]`): they may write a spin variable or another
// element, so they release and are still checked as writes (Spin without
// Atomic).
func markArrayStores(li loops.Input, lr *loops.Result) {
	var unresolved []uint64
	for _, s := range lr.Spins {
		if len(s.Consts) == 0 {
			unresolved = append(unresolved, s.Loads...)
		}
	}
	for _, a := range loops.ObjectStores(li, loops.SpinObjects(li, unresolved)) {
		if in, ok := li.Graph.Inst(a); ok && in.Mem.Access&disasm.Atomic == 0 {
			in.Mem.Access |= disasm.Spin
		}
	}
}

// markLocalStores marks, for a spin variable reached through a register,
// the stores in the same function that use the same address expression:
// they may be its counterpart writes (a thread that waits on a slot's
// flag usually sets it through the same pointer). The register may hold
// another pointer there, so they release and are still checked (Spin
// without Atomic). Other stores are found at run time, once a spinning
// load has seen the address (runtime/loops.c).
func markLocalStores(g *cfg.Graph, locals map[spinLocal]bool) {
	for l := range locals {
		for _, bi := range g.Funcs[l.fn].Blocks {
			for i := range g.Insts(&g.Blocks[bi]) {
				in := &g.Insts(&g.Blocks[bi])[i]
				if in.Flags&disasm.HasMem != 0 && in.Flags&disasm.RIPRel == 0 &&
					in.Mem.Access&(disasm.Read|disasm.Write) == disasm.Write && addressOnly(in.Mem) == l.mem &&
					in.Mem.Access&disasm.Atomic == 0 {
					in.Mem.Access |= disasm.Spin
				}
			}
		}
	}
}

// planHooks places the hooks of the wait loops, except those of the loops
// with a block in failed (hooks that could not be placed there: a loop is
// hooked whole or not at all, so that a marked wait always meets its
// exit hook), and the lock-call hooks of signalling functions.
func planHooks(li loops.Input, lr *loops.Result, failed map[uint64]bool) *patch.Hooks {
	g := li.Graph
	h := &patch.Hooks{WaitCalls: map[uint64]bool{}, Exits: map[uint64][]patch.ExitHook{}, LockCalls: lockCalls(li)}
	for a := range h.LockCalls {
		if bi := g.BlockAt(a); bi >= 0 && failed[g.Blocks[bi].Start] {
			delete(h.LockCalls, a)
		}
	}
	type edge struct {
		from, to uint64
		branch   bool
	}
	placed := map[edge]bool{}
	add := func(e loops.Exit, v patch.Value) {
		k := edge{g.Blocks[e.From].Start, e.To, e.Branch}
		if placed[k] { // nested wait loops share exit edges
			return
		}
		placed[k] = true
		h.Exits[k.from] = append(h.Exits[k.from], patch.ExitHook{To: e.To, Branch: e.Branch, Value: v})
	}
	for _, w := range lr.Waits {
		l := &lr.Loops[w.Loop]
		if waitLoopTouches(g, lr, w, failed) {
			continue
		}
		for _, c := range w.Waits {
			h.WaitCalls[c.Addr] = true
		}
		cv := waitCV(w)
		for _, e := range l.Exits {
			add(e, cv)
		}
		// Before a rotated loop, registers may not hold the loop's values
		// yet: only a constant condition variable is used there.
		gv := cv
		if gv.Kind != patch.Const {
			gv = patch.Value{}
		}
		for _, e := range w.Guards {
			add(e, gv)
		}
	}
	return h
}

// waitCV is the condition variable the waits of w wait on, for the exit
// hooks; unknown when they wait on different ones.
func waitCV(w loops.WaitLoop) patch.Value {
	var cv patch.Value
	for i, c := range w.Waits {
		v := hookValue(c.CV)
		if i == 0 {
			cv = v
		} else if v != cv {
			return patch.Value{} // waits on different condition variables: none is static
		}
	}
	return cv
}

// waitLoopTouches reports whether wait loop w has a hook in a block of
// failed: an exit, a guard or a wait call.
func waitLoopTouches(g *cfg.Graph, lr *loops.Result, w loops.WaitLoop, failed map[uint64]bool) bool {
	if len(failed) == 0 {
		return false
	}
	for _, e := range append(append([]loops.Exit(nil), lr.Loops[w.Loop].Exits...), w.Guards...) {
		if failed[g.Blocks[e.From].Start] {
			return true
		}
	}
	for _, c := range w.Waits {
		if bi := g.BlockAt(c.Addr); bi >= 0 && failed[g.Blocks[bi].Start] {
			return true
		}
	}
	return false
}

// lockCalls finds, in every function that signals a condition variable,
// the calls that lock a mutex: the runtime is told the mutex is used with
// condition variables before the first wait on it, so that the regions
// that set the condition are published at their unlock (runtime/detect/cond.go).
func lockCalls(li loops.Input) map[uint64]patch.Value {
	g := li.Graph
	byStart := map[uint64]string{}
	for _, f := range g.Funcs {
		byStart[f.Start] = f.Name
	}
	callee := func(in *disasm.Inst) string {
		switch {
		case in.Kind == disasm.Call:
			if n, ok := li.PLT[in.Target]; ok {
				return n
			}
			return byStart[in.Target]
		case in.Kind == disasm.CallInd && in.Flags&disasm.RIPRel != 0:
			return li.GOT[in.Target]
		}
		return ""
	}
	out := map[uint64]patch.Value{}
	for _, f := range g.Funcs {
		notifies := false
		for _, imp := range f.Imports {
			notifies = notifies || loops.IsNotify(imp)
		}
		if !notifies {
			continue
		}
		for _, bi := range f.Blocks {
			b := &g.Blocks[bi]
			last := &g.Sections[b.Sec].Insts[b.Last]
			if reg, ok := loops.LockArg(callee(last)); ok {
				out[last.Addr] = patch.Value{Kind: patch.RegPlus, Reg: reg}
			}
		}
	}
	return out
}

// addressOnly is the address expression of a memory operand.
func addressOnly(m disasm.MemOp) disasm.MemOp {
	return disasm.MemOp{Base: m.Base, Index: m.Index, Scale: m.Scale, Disp: m.Disp}
}

func hookValue(v loops.Value) patch.Value {
	switch v.Kind {
	case loops.Const:
		return patch.Value{Kind: patch.Const, Addr: v.Addr}
	case loops.RegPlus:
		return patch.Value{Kind: patch.RegPlus, Reg: v.Reg, Disp: v.Disp}
	case loops.Load:
		return patch.Value{Kind: patch.Load, Reg: v.Reg, Disp: v.Disp, Addr: v.Addr}
	case loops.LoadPlus:
		if v.Add == int64(int32(v.Add)) {
			return patch.Value{Kind: patch.Load, Reg: v.Reg, Disp: v.Disp, Addr: v.Addr, Add: int32(v.Add)}
		}
	}
	return patch.Value{}
}
