package loops

import (
	"sort"

	"golang.org/x/arch/x86/x86asm"

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
func CounterpartStores(in Input, vars []uint64, size uint64) []uint64 {
	if len(vars) == 0 {
		return nil
	}
	hit := func(a uint64) bool {
		for _, v := range vars {
			if a < v+size && v < a+size {
				return true
			}
		}
		return false
	}
	g := in.Graph
	var out []uint64
	for bi := range g.Blocks {
		b := &g.Blocks[bi]
		if !b.Reached {
			continue
		}
		insts := g.Insts(b)
		mentions := false
		for i := range insts {
			in := &insts[i]
			if in.Flags&disasm.RIPRel == 0 || !hit(in.Target) {
				continue
			}
			mentions = true
			if in.Flags&disasm.HasMem != 0 && in.Mem.Access&(disasm.Read|disasm.Write) == disasm.Write {
				out = append(out, in.Addr)
			}
		}
		if mentions && in.Decode != nil {
			out = append(out, blockStores(in, insts, hit)...)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	k := 0
	for i, a := range out {
		if i == 0 || a != out[k-1] {
			out[k] = a
			k++
		}
	}
	return out[:k]
}

// blockStores tracks which registers and stack slots hold a known address
// through one block and returns the stores through such registers that hit.
func blockStores(in Input, insts []disasm.Inst, hit func(uint64) bool) []uint64 {
	type slot struct {
		base int
		disp int64
	}
	regs := map[int]uint64{}
	slots := map[slot]uint64{}
	var out []uint64
	for i := range insts {
		di := &insts[i]
		x, ok := in.Decode(di.Addr)
		if !ok {
			regs, slots = map[int]uint64{}, map[slot]uint64{}
			continue
		}
		if di.Flags&disasm.HasMem != 0 && di.Mem.Access&(disasm.Read|disasm.Write) == disasm.Write && di.Flags&disasm.RIPRel == 0 {
			if n, w, ok := gpr(di.Mem.Base); ok && w == 8 && di.Mem.Index == 0 {
				if v, known := regs[n]; known && hit(v+uint64(di.Mem.Disp)) {
					out = append(out, di.Addr)
				}
			}
		}
		// The value an instruction gives its destination, when known.
		var val uint64
		known := false
		switch {
		case x.Op == x86asm.LEA && di.Flags&disasm.RIPRel != 0:
			val, known = di.Target, true
		case x.Op == x86asm.MOV:
			switch src := x.Args[1].(type) {
			case x86asm.Reg:
				if n, w, ok := gpr(src); ok && w == 8 {
					val, known = regs[n]
				}
			case x86asm.Mem:
				if n, w, ok := gpr(src.Base); ok && w == 8 && src.Index == 0 && (n == rSP || n == rBP) {
					val, known = slots[slot{n, src.Disp}]
				}
			}
		}
		if m, ok := x.Args[0].(x86asm.Mem); ok && x.Op == x86asm.MOV {
			if n, w, ok := gpr(m.Base); ok && w == 8 && m.Index == 0 && (n == rSP || n == rBP) {
				s := slot{n, m.Disp}
				delete(slots, s)
				if r, ok := x.Args[1].(x86asm.Reg); ok {
					if rn, rw, ok := gpr(r); ok && rw == 8 {
						if v, k := regs[rn]; k {
							slots[s] = v
						}
					}
				}
			}
		}
		w := regWrites(di, &x)
		for n := 0; n < 16; n++ {
			if w&(1<<n) != 0 {
				delete(regs, n)
			}
		}
		if n, width, ok := gprDest(&x); ok && known && width == 8 {
			regs[n] = val
		}
		if di.Kind == disasm.Call || di.Kind == disasm.CallInd {
			slots = map[slot]uint64{}
		}
	}
	return out
}

// gprDest is the general-purpose register x writes as its first operand.
func gprDest(x *x86asm.Inst) (int, int, bool) {
	if r, ok := x.Args[0].(x86asm.Reg); ok {
		return gpr(r)
	}
	return 0, 0, false
}
