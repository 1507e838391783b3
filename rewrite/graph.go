package rewrite

import (
	"strings"

	"hgrewrite/abi"
	"hgrewrite/cfg"
	"hgrewrite/disasm"
	"hgrewrite/elfrw"
)

// Graph decodes every executable section of bin and builds the
// whole-binary graph the rewriter instruments, with the accesses it
// treats as atomic already marked (markGuardReads, markAtomicAccessors).
// It also returns the number of undecodable instructions in reachable
// code.
func Graph(bin *elfrw.Binary) (*cfg.Graph, int) {
	in := graphInput(bin)
	markGuardReads(bin, in.Sections)
	markAtomicAccessors(bin, in.Sections)
	g := cfg.Build(in)
	return g, undecodable(g)
}

// instrumentSection says which executable sections get instrumented: the
// program's code, not the PLT stubs or the crt start-up sections.
func instrumentSection(name string) bool {
	return name == ".text" || len(name) > 6 && name[:6] == ".text."
}

// graphInput decodes the executable sections, with every address the
// file names as code (symbols, unwind entries, PLT stubs, entry, landing
// pads) as a decoding sync point and a function or entry hint.
func graphInput(bin *elfrw.Binary) cfg.Input {
	in := cfg.Input{PLT: bin.PLT, GOT: bin.GOT, PIE: bin.PIE}
	var syncs []uint64
	for _, s := range bin.Symbols {
		if !bin.IsCode(s.Addr) {
			continue
		}
		syncs = append(syncs, s.Addr)
		if s.Func {
			in.Funcs = append(in.Funcs, cfg.FuncHint{Name: s.Name, Addr: s.Addr, Size: s.Size})
		}
	}
	for _, f := range bin.FDEs {
		in.Funcs = append(in.Funcs, cfg.FuncHint{Addr: f.Start, Size: f.End - f.Start})
		in.Unwind = append(in.Unwind, cfg.FuncHint{Addr: f.Start, Size: f.End - f.Start})
		syncs = append(syncs, f.Start)
	}
	for addr := range bin.PLT {
		in.Entries = append(in.Entries, addr)
	}
	in.Entries = append(in.Entries, bin.Entry)
	in.Entries = append(in.Entries, bin.LandingPads...)
	syncs = append(syncs, in.Entries...)
	in.CodePtrs = bin.CodePtrs
	for _, s := range bin.ExecSections() {
		insts := disasm.Section(bin.SectionData(s), s.Addr, syncs)
		in.Sections = append(in.Sections, cfg.Code{Name: s.Name, Addr: s.Addr, Insts: insts, Instrument: instrumentSection(s.Name)})
	}
	in.Data = func(addr, n uint64) []byte {
		if bin.IsCode(addr) {
			return nil
		}
		return bin.Bytes(addr, n)
	}
	return in
}

// undecodable counts the undecodable instructions in reachable code
// (not the filler between functions).
func undecodable(g *cfg.Graph) int {
	bad := 0
	for bi := range g.Blocks {
		b := &g.Blocks[bi]
		if !b.Reached {
			continue
		}
		for _, ins := range g.Insts(b) {
			if ins.Kind == disasm.Bad && ins.Flags&disasm.Filler == 0 {
				bad++
			}
		}
	}
	return bad
}

// markGuardReads treats reads of C++ static-initialisation guards
// (_ZGV* symbols) as atomic: compilers test the guard byte inline with an
// acquire load, which is a plain move on x86, and skip __cxa_guard_acquire
// when the object is already built. As an atomic access the read acquires
// what __cxa_guard_release published (runtime/wrappers.c).
func markGuardReads(bin *elfrw.Binary, secs []cfg.Code) {
	guards := map[uint64]bool{}
	for _, s := range bin.Symbols {
		if !s.Func && strings.HasPrefix(s.Name, "_ZGV") {
			guards[s.Addr] = true
		}
	}
	if len(guards) == 0 {
		return
	}
	for _, sec := range secs {
		for i := range sec.Insts {
			in := &sec.Insts[i]
			if in.Flags&disasm.RIPRel != 0 && in.Flags&disasm.HasMem != 0 && guards[in.Target] {
				in.Mem.Access |= disasm.Atomic
			}
		}
	}
}

// markAtomicAccessors makes the plain loads and stores inside libstdc++'s
// std::atomic accessors acquires and releases. Without optimisation they
// are out-of-line functions of the program (std::atomic<T>::load,
// store, operator T, operator=), whose move through `this` is the atomic
// access; with optimisation they are inlined, and spinning-read loop
// detection covers the loads. Read-modify-writes are lock-prefixed and
// atomic already.
func markAtomicAccessors(bin *elfrw.Binary, secs []cfg.Code) {
	type span struct{ lo, hi uint64 }
	var fns []span
	for _, s := range bin.Symbols {
		if s.Func && s.Size > 0 && isAtomicAccessor(s.Name) {
			fns = append(fns, span{s.Addr, s.Addr + s.Size})
		}
	}
	if len(fns) == 0 {
		return
	}
	for _, sec := range secs {
		for i := range sec.Insts {
			in := &sec.Insts[i]
			if in.Flags&disasm.HasMem == 0 || in.Flags&(disasm.StackMem|disasm.FrameMem|disasm.RIPRel|disasm.StringOp) != 0 {
				continue
			}
			if rw := in.Mem.Access & (disasm.Read | disasm.Write); rw == disasm.Read || rw == disasm.Write {
				for _, f := range fns {
					if in.Addr >= f.lo && in.Addr < f.hi {
						in.Mem.Access |= disasm.Ordered | disasm.Atomic
						break
					}
				}
			}
		}
	}
}

// isAtomicAccessor recognises the mangled names of std::atomic<T> and
// std::__atomic_base<T> load, store, conversion and assignment members.
func isAtomicAccessor(name string) bool {
	rest, ok := strings.CutPrefix(name, "_ZNK")
	if !ok {
		if rest, ok = strings.CutPrefix(name, "_ZN"); !ok {
			return false
		}
	}
	if !strings.HasPrefix(rest, "St6atomicI") && !strings.HasPrefix(rest, "St13__atomic_baseI") {
		return false
	}
	// The member name follows the template arguments: 4load, 5store, cv
	// (conversion), aSE (assignment).
	return strings.Contains(rest, "E4loadE") || strings.Contains(rest, "E5storeE") ||
		strings.Contains(rest, "Ecv") || strings.Contains(rest, "EaSE")
}

// vectorFlags says which vector state the program's code can hold live
// at an instrumented instruction, for the runtime's save around its
// calls into the detector (abi.HdrFlagNoVEX, abi.HdrFlagNoEVEX): a
// register past xmm's low 128 bits is written only by a VEX or EVEX
// encoded instruction, and a library's code leaves none live when it
// returns or calls back (every vector register is caller-saved). Every
// executable section counts, not only the reachable code; one byte that
// did not decode leaves both flags out.
func vectorFlags(bin *elfrw.Binary, g *cfg.Graph) uint32 {
	vex, evex := false, false
	for _, s := range g.Sections {
		for _, in := range s.Insts {
			if in.Kind == disasm.Bad {
				return 0
			}
			v, e := disasm.VectorEncoding(bin.Bytes(in.Addr, uint64(in.Len)))
			vex, evex = vex || v, evex || e
		}
	}
	var flags uint32
	if !vex {
		flags |= abi.HdrFlagNoVEX
	}
	if !evex {
		flags |= abi.HdrFlagNoEVEX
	}
	return flags
}
