package loops

import (
	"slices"
	"sort"

	"golang.org/x/arch/x86/x86asm"

	"hgrewrite/cfg"
	"hgrewrite/disasm"
)

// CounterpartStores finds the stores in the binary that write one of the
// spin variables at link-time addresses vars (SpinLoop.Consts): plain
// stores to a rip-relative operand, and stores through a register that,
// within the block, holds such an address. The second kind is how
// unoptimised code and C11 atomics at -O0 write a global: `lea flag(%rip),
// %rax; mov %rax, -0x10(%rbp); ...; mov -0x10(%rbp), %rax; mov %edx,
// (%rax)`. The tracking is block-local: register and stack-slot values are
// forgotten at block boundaries and calls. Read-modify-writes are not
// returned (they are atomic instructions already). The result is sorted.
func CounterpartStores(in Input, vars []Var) []uint64 {
	if len(vars) == 0 {
		return nil
	}
	var out []uint64
	blocksMentioning(in.Graph, func(a uint64) bool { return hitVar(vars, a, 1) }, func(insts []disasm.Inst) {
		out = ripAccesses(out, insts, vars, isStore)
		if in.Decode != nil {
			out = append(out, trackedStores(in, insts, func(p ptr, size uint64) bool {
				return p.exact && hitVar(vars, p.base+uint64(p.off), size)
			})...)
		}
	})
	slices.Sort(out)
	return slices.Compact(out)
}

// SpinVarLoads finds the plain loads in the binary of the spin variables
// at link-time addresses vars (SpinLoop.Consts) through a rip-relative
// operand: the condition loads of their spinning-read loops, and the
// loads elsewhere (a thread that polls the variable under a mutex, takes
// what it holds and clears it, in a loop that writes it and so does not
// spin). The result is sorted.
func SpinVarLoads(in Input, vars []Var) []uint64 {
	if len(vars) == 0 {
		return nil
	}
	var out []uint64
	blocksMentioning(in.Graph, func(a uint64) bool { return hitVar(vars, a, 1) }, func(insts []disasm.Inst) {
		out = ripAccesses(out, insts, vars, isLoad)
	})
	slices.Sort(out)
	return slices.Compact(out)
}

// ripAccesses appends to out the addresses of the instructions of insts
// of the kind want whose rip-relative operand, of its size, overlaps one
// of vars.
func ripAccesses(out []uint64, insts []disasm.Inst, vars []Var, want func(*disasm.Inst) bool) []uint64 {
	for i := range insts {
		di := &insts[i]
		if di.Flags&disasm.RIPRel != 0 && want(di) && hitVar(vars, di.Target, uint64(max(di.Mem.Size, 1))) {
			out = append(out, di.Addr)
		}
	}
	return out
}

// ptr is what the block-local tracking knows about a register or stack
// slot: it holds link-time address base+off (exact), or some address
// computed from base (derived: base plus an unknown amount).
type ptr struct {
	base  uint64
	off   int64
	exact bool
}

// tracker follows pointers to globals through one block.
type tracker struct {
	regs  map[int]ptr
	slots map[[2]int64]ptr
}

func newTracker() *tracker { return &tracker{regs: map[int]ptr{}, slots: map[[2]int64]ptr{}} }

// addr is the pointer the memory access of di addresses, if known.
func (tk *tracker) addr(di *disasm.Inst) (ptr, bool) {
	if di.Flags&disasm.RIPRel != 0 {
		return ptr{base: di.Target, exact: true}, true
	}
	m := di.Mem
	r := memRefOf(di, x86asm.Mem{Base: m.Base, Index: m.Index, Scale: m.Scale, Disp: m.Disp})
	if r.kind != refReg {
		return ptr{}, false
	}
	return tk.address(r)
}

// address is the pointer memory operand r addresses, if known: a
// rip-relative one, or one based on a register holding a pointer (an index
// makes it derived).
func (tk *tracker) address(r memRef) (ptr, bool) {
	switch r.kind {
	case refRIP:
		return ptr{base: uint64(r.disp), exact: true}, true
	case refReg:
		p, ok := tk.regs[r.reg]
		if !ok {
			return ptr{}, false
		}
		if r.index != noIndex {
			p.exact = false
		}
		p.off += r.disp
		return p, true
	}
	return ptr{}, false
}

// step updates the tracking for one instruction.
func (tk *tracker) step(di *disasm.Inst, x *x86asm.Inst) {
	val, known := tk.value(di, x)
	tk.store(di, x)
	w := regWrites(di, x)
	for n := 0; n < 16; n++ {
		if w&(1<<n) != 0 {
			delete(tk.regs, n)
		}
	}
	if n, width, ok := gprDest(x); ok && known && width == 8 {
		tk.regs[n] = val
	}
	if di.Kind == disasm.Call || di.Kind == disasm.CallInd {
		tk.slots = map[[2]int64]ptr{}
	}
}

// value is the pointer x puts in its destination register, if known: the
// address lea computes, a copy of a register or stack slot, or a tracked
// pointer plus a constant (still exact) or plus a variable amount (base +
// index: derived, still a pointer into the same object).
func (tk *tracker) value(di *disasm.Inst, x *x86asm.Inst) (ptr, bool) {
	n, _, ok := gprDest(x)
	if !ok {
		return ptr{}, false
	}
	t := transfer(di, x, n)
	switch t.kind {
	case xAddr:
		return tk.address(t.mem)
	case xCopy:
		if !t.conv && t.srcWidth == 8 {
			p, ok := tk.regs[t.src]
			return p, ok
		}
	case xLoad:
		if k, ok := slotKey(t.mem); ok && !t.conv {
			p, ok := tk.slots[k]
			return p, ok
		}
	case xAddImm:
		if p, ok := tk.regs[n]; ok {
			p.off += t.imm
			return p, true
		}
	case xAddVar:
		p, ok := tk.regs[n]
		if !ok && !t.sub && t.src >= 0 && t.srcWidth == 8 {
			p, ok = tk.regs[t.src]
		}
		p.exact = false
		return p, ok
	}
	return ptr{}, false
}

// store follows a register's pointer into the stack slot a mov writes
// (any other mov to the slot forgets it).
func (tk *tracker) store(di *disasm.Inst, x *x86asm.Inst) {
	m, ok := x.Args[0].(x86asm.Mem)
	t := stored(di, x)
	if !ok || t.kind == xComputed || t.conv {
		return
	}
	k, ok := slotKey(memRefOf(di, m))
	if !ok {
		return
	}
	delete(tk.slots, k)
	if t.kind == xCopy && t.srcWidth == 8 {
		if p, ok := tk.regs[t.src]; ok {
			tk.slots[k] = p
		}
	}
}

// slotKey names the stack slot r addresses: rsp- or rbp-based, without
// index (rbp whether or not it is the frame pointer: the tracking is
// block-local).
func slotKey(r memRef) ([2]int64, bool) {
	ok := r.kind == refReg && r.index == noIndex && (r.reg == rSP || r.reg == rBP)
	return [2]int64{int64(r.reg), r.disp}, ok
}

// Var is a spin variable: its link-time address and size.
type Var struct{ Addr, Size uint64 }

// hitVar reports whether size bytes at a overlap one of vars.
func hitVar(vars []Var, a, size uint64) bool {
	for _, v := range vars {
		if a < v.Addr+max(v.Size, 1) && v.Addr < a+size {
			return true
		}
	}
	return false
}

// trackedStores returns the stores of one block through registers whose
// tracked pointer (and the store's size) satisfies want.
func trackedStores(in Input, insts []disasm.Inst, want func(ptr, uint64) bool) []uint64 {
	tk := newTracker()
	var out []uint64
	for i := range insts {
		di := &insts[i]
		x, ok := in.Decode(di.Addr)
		if !ok {
			tk = newTracker()
			continue
		}
		if isStore(di) && di.Flags&disasm.RIPRel == 0 {
			if p, ok := tk.addr(di); ok && want(p, uint64(max(di.Mem.Size, 1))) {
				out = append(out, di.Addr)
			}
		}
		tk.step(di, &x)
	}
	return out
}

// isLoad: a plain load (not a read-modify-write).
func isLoad(di *disasm.Inst) bool {
	return di.Flags&disasm.HasMem != 0 && di.Mem.Access&(disasm.Read|disasm.Write) == disasm.Read
}

// isStore: a plain store (not a read-modify-write).
func isStore(di *disasm.Inst) bool {
	return di.Flags&disasm.HasMem != 0 && di.Mem.Access&(disasm.Read|disasm.Write) == disasm.Write
}

// blocksMentioning calls fn with the instructions of every reached block
// that has a rip-relative operand whose address satisfies hit.
func blocksMentioning(g *cfg.Graph, hit func(uint64) bool, fn func([]disasm.Inst)) {
	for bi := range g.Blocks {
		b := &g.Blocks[bi]
		if !b.Reached {
			continue
		}
		insts := g.Insts(b)
		for i := range insts {
			if insts[i].Flags&disasm.RIPRel != 0 && hit(insts[i].Target) {
				fn(insts)
				break
			}
		}
	}
}

// SpinObjects returns, for spinning-read condition loads whose address is
// not a constant, the global object each one reads from when the block
// computes the address from the object's link-time address plus an amount
// only known at run time (an element of a global array of flags,
// `flags[i]`, as unoptimised code computes it).
func SpinObjects(in Input, loads []uint64) []uint64 {
	g := in.Graph
	seen := map[uint64]bool{}
	var out []uint64
	for _, a := range loads {
		bi := g.BlockAt(a)
		if bi < 0 || in.Decode == nil {
			continue
		}
		tk := newTracker()
		for _, di := range g.Insts(&g.Blocks[bi]) {
			x, ok := in.Decode(di.Addr)
			if !ok {
				tk = newTracker()
				continue
			}
			if di.Addr == a {
				if p, ok := tk.addr(&di); ok && !p.exact && !seen[p.base] {
					seen[p.base] = true
					out = append(out, p.base)
				}
				break
			}
			tk.step(&di, &x)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// ObjectStores returns the stores, anywhere in the binary, through a
// pointer the block computes from one of the objects' link-time addresses
// (see SpinObjects). They may write a spin variable or another element of
// the same object.
func ObjectStores(in Input, objects []uint64) []uint64 {
	if len(objects) == 0 || in.Decode == nil {
		return nil
	}
	want := map[uint64]bool{}
	for _, o := range objects {
		want[o] = true
	}
	var out []uint64
	blocksMentioning(in.Graph, func(a uint64) bool { return want[a] }, func(insts []disasm.Inst) {
		out = append(out, trackedStores(in, insts, func(p ptr, _ uint64) bool { return !p.exact && want[p.base] })...)
	})
	return out
}

// gprDest is the general-purpose register x writes as its first operand.
func gprDest(x *x86asm.Inst) (int, int, bool) {
	if r, ok := x.Args[0].(x86asm.Reg); ok {
		return gpr(r)
	}
	return 0, 0, false
}
