// Package cfg builds the whole-binary control-flow graph: basic blocks,
// functions, edges (jumps, fall-through, calls, recovered jump tables) and
// the call graph, with calls through PLT stubs resolved to symbol names.
//
// It is pure logic over decoded instructions and facts the caller read from
// the file (symbols, exception tables, code pointers found in data); it does
// no I/O. Its most important output for the rewriter is the set of block
// leaders: every address where control can arrive other than by falling
// through from the previous instruction. The patcher only ever overwrites
// bytes inside one block, so a missing leader is a correctness bug and an
// extra one only costs patching room. When in doubt, a rule here adds
// leaders.
package cfg

import (
	"encoding/binary"
	"sort"
	"strings"

	"hgrewrite/disasm"
)

// Code is one decoded executable section.
type Code struct {
	Name       string
	Addr       uint64
	Insts      []disasm.Inst
	Instrument bool // the patcher may instrument this section
}

// FuncHint is a known function start, with its extent when known.
type FuncHint struct {
	Name string
	Addr uint64
	Size uint64
}

// Input is everything the graph is built from.
type Input struct {
	Sections []Code
	Funcs    []FuncHint // function symbols and exception-table ranges
	Entries  []uint64   // other entry points: ELF entry, PLT stubs, landing pads
	// CodePtrs are code addresses found in data. They are always leaders,
	// but start reachable code only inside a known function range: in
	// position-dependent executables they come from scanning data words, and
	// a stray integer must not make data embedded in code look reachable.
	CodePtrs []uint64
	// Unwind are the ranges covered by unwind information (.eh_frame FDEs).
	Unwind []FuncHint
	PLT    map[uint64]string
	GOT    map[uint64]string
	PIE    bool
	// Data returns n bytes of non-executable file data at addr, or nil. It is
	// used to read jump tables.
	Data func(addr, n uint64) []byte
}

// Block is a basic block: instructions Insts[First..Last] of section Sec.
type Block struct {
	Start, End  uint64
	Sec         int
	First, Last int
	Func        int  // index into Graph.Funcs, -1 if none
	Reached     bool // reachable from a known entry point: code
	Padding     bool // alignment filler that nothing reaches
	Unwound     bool // covered by unwind information
	// Entry: control may arrive here other than along the Succs of the
	// graph's blocks: a function or declared entry point, a code
	// pointer or an address an instruction takes, a jump-table target,
	// a call's return site, a section's start.
	Entry bool
	Succs []uint64
}

// Func is a function: a start address and the blocks assigned to it.
type Func struct {
	Name         string
	Start, End   uint64
	Blocks       []int
	FramePointer bool     // sets up rbp as a frame pointer: rbp-based accesses are stack accesses
	Callees      []uint64 // direct call targets
	Imports      []string // imported functions called through the PLT or GOT
}

// Leader reasons, kept for diagnostics and for telling padding from code.
const (
	leadWeak   = 1 // follows a control transfer; nothing known jumps here
	leadStrong = 2 // a known target or entry point
	leadEntry  = 4 // reached from outside the graph's edges (Block.Entry)
)

// Graph is the whole-binary control-flow graph.
type Graph struct {
	Sections   []Code
	Blocks     []Block // sorted by Start
	Funcs      []Func  // sorted by Start
	JumpTables int     // jump tables recovered
	HasUnwind  bool    // the binary has unwind information at all
	leaders    map[uint64]uint8
	// tableTargets are the entries of recovered jump tables.
	tableTargets []uint64
}

// Build constructs the graph.
func Build(in Input) *Graph {
	g := &Graph{Sections: in.Sections, leaders: map[uint64]uint8{}}
	g.collectLeaders(in)
	g.splitBlocks()
	g.markReached(in)
	g.buildFuncs(in)
	g.linkEdges(in)
	return g
}

// IsLeader reports whether control may arrive at addr other than by falling
// through.
func (g *Graph) IsLeader(addr uint64) bool { return g.leaders[addr]&leadStrong != 0 }

// Inst returns the instruction at addr, if addr is an instruction boundary.
func (g *Graph) Inst(addr uint64) (*disasm.Inst, bool) {
	si, ii, ok := g.locate(addr)
	if !ok {
		return nil, false
	}
	return &g.Sections[si].Insts[ii], true
}

// locate finds the section and instruction index that start at addr.
func (g *Graph) locate(addr uint64) (int, int, bool) {
	for si := range g.Sections {
		s := &g.Sections[si]
		n := len(s.Insts)
		if n == 0 || addr < s.Addr || addr >= s.Insts[n-1].Addr+uint64(s.Insts[n-1].Len) {
			continue
		}
		i := sort.Search(n, func(i int) bool { return s.Insts[i].Addr >= addr })
		if i < n && s.Insts[i].Addr == addr {
			return si, i, true
		}
		return 0, 0, false
	}
	return 0, 0, false
}

func (g *Graph) isBoundary(addr uint64) bool {
	_, _, ok := g.locate(addr)
	return ok
}

func (g *Graph) inCode(addr uint64) bool {
	for _, s := range g.Sections {
		n := len(s.Insts)
		if n > 0 && addr >= s.Addr && addr < s.Insts[n-1].Addr+uint64(s.Insts[n-1].Len) {
			return true
		}
	}
	return false
}

// entry marks addr as a leader that control reaches from outside the
// graph's edges.
func (g *Graph) entry(addr uint64) { g.leaders[addr] |= leadStrong | leadEntry }

func (g *Graph) strong(addr uint64) {
	if g.isBoundary(addr) {
		g.leaders[addr] |= leadStrong
	}
}

func (g *Graph) collectLeaders(in Input) {
	for _, f := range in.Funcs {
		g.entry(f.Addr)
	}
	for _, a := range in.Entries {
		g.entry(a)
	}
	for _, a := range in.CodePtrs {
		g.entry(a)
	}
	for si := range g.Sections {
		insts := g.Sections[si].Insts
		if len(insts) > 0 {
			g.leaders[insts[0].Addr] |= leadWeak | leadEntry
		}
		for i := range insts {
			ins := &insts[i]
			switch ins.Kind {
			case disasm.Jmp, disasm.Jcc:
				g.strong(ins.Target)
			case disasm.Call:
				g.entry(ins.Target)
			case disasm.Other, disasm.Nop:
				// Code addresses in operands: lea func(%rip), mov $func, %edi.
				if ins.Target != 0 && (ins.Flags&disasm.RIPRel != 0 || !in.PIE) {
					g.entry(ins.Target)
				}
			}
			if i+1 < len(insts) {
				switch ins.Kind {
				case disasm.Jcc:
					// the fall-through is reached
					g.leaders[insts[i+1].Addr] |= leadStrong
				case disasm.Call, disasm.CallInd:
					// a return site: reached from the callee
					g.entry(insts[i+1].Addr)
				case disasm.Jmp, disasm.JmpInd, disasm.Ret, disasm.Stop, disasm.Bad:
					// Reached only if something we know of jumps here.
					g.leaders[insts[i+1].Addr] |= leadWeak
				}
			}
		}
	}
	g.recoverJumpTables(in)
}

// recoverJumpTables finds the relative jump tables gcc and clang emit for
// switch statements in position-independent code:
//
//	lea table(%rip), %rdx ; movslq (%rdx,%rax,4), %rax ; add %rdx, %rax ; jmp *%rax
//
// Any RIP-relative reference to non-executable data is a candidate table
// base: its 32-bit entries are read while base+entry lands on an instruction
// boundary in the same section as the reference. Absolute tables (8-byte
// entries, position-dependent code) are code pointers in data and arrive
// through Input.Entries.
func (g *Graph) recoverJumpTables(in Input) {
	if in.Data == nil {
		return
	}
	const maxEntries = 1 << 14
	seen := map[uint64]bool{}
	for si := range g.Sections {
		s := &g.Sections[si]
		if !hasIndirectJump(s.Insts) {
			continue
		}
		for i := range s.Insts {
			ins := &s.Insts[i]
			if ins.Flags&disasm.RIPRel == 0 || ins.Kind == disasm.JmpInd || ins.Kind == disasm.CallInd {
				continue
			}
			base := ins.Target
			if base%4 != 0 || seen[base] || g.inCode(base) {
				continue
			}
			seen[base] = true
			found := 0
			for k := uint64(0); k < maxEntries; k++ {
				p := in.Data(base+4*k, 4)
				if p == nil {
					break
				}
				t := uint64(int64(base) + int64(int32(binary.LittleEndian.Uint32(p))))
				tsi, _, ok := g.locate(t)
				if !ok || tsi != si {
					break
				}
				g.entry(t)
				g.tableTargets = append(g.tableTargets, t)
				found++
			}
			if found >= 2 {
				g.JumpTables++
			}
		}
	}
}

func hasIndirectJump(insts []disasm.Inst) bool {
	for i := range insts {
		if insts[i].Kind == disasm.JmpInd {
			return true
		}
	}
	return false
}

// splitBlocks cuts every section at leaders and after control transfers.
func (g *Graph) splitBlocks() {
	for si := range g.Sections {
		insts := g.Sections[si].Insts
		start := 0
		for i := range insts {
			end := i+1 == len(insts) || g.leaders[insts[i+1].Addr] != 0
			if !end {
				continue
			}
			b := Block{Start: insts[start].Addr, End: insts[i].Addr + uint64(insts[i].Len),
				Sec: si, First: start, Last: i, Func: -1, Entry: g.leaders[insts[start].Addr]&leadEntry != 0}
			g.Blocks = append(g.Blocks, b)
			start = i + 1
		}
	}
	sort.Slice(g.Blocks, func(i, j int) bool { return g.Blocks[i].Start < g.Blocks[j].Start })
}

func allFiller(insts []disasm.Inst) bool {
	for i := range insts {
		switch insts[i].Kind {
		case disasm.Nop, disasm.Stop:
		default:
			return false
		}
	}
	return true
}

// markReached walks the code from the entry points: function starts,
// declared entries, jump-table targets and code pointers inside known
// functions; then along fall-through, jumps and calls. An address that code
// merely takes (lea) is a leader but not an entry point: in hand-written
// assembly it is as likely a table embedded in the code. Whatever is not reached is data or dead filler; the
// patcher never touches it, except that unreached filler hosts islands.
func (g *Graph) markReached(in Input) {
	var ranges []span
	var work []uint64
	for _, f := range in.Funcs {
		work = append(work, f.Addr)
		if f.Size > 0 {
			ranges = append(ranges, span{f.Addr, f.Addr + f.Size})
		}
	}
	work = append(work, in.Entries...)
	funcs := mergeSpans(ranges)
	inFunc := func(a uint64) bool { return len(funcs) == 0 || funcs.contains(a) }
	for _, a := range append(append([]uint64(nil), in.CodePtrs...), g.tableTargets...) {
		if inFunc(a) {
			work = append(work, a)
		}
	}
	for len(work) > 0 {
		a := work[len(work)-1]
		work = work[:len(work)-1]
		bi := g.BlockAt(a)
		if bi < 0 || g.Blocks[bi].Start != a || g.Blocks[bi].Reached {
			continue
		}
		b := &g.Blocks[bi]
		b.Reached = true
		for _, ins := range g.Insts(b) {
			switch ins.Kind {
			case disasm.Jmp, disasm.Jcc, disasm.Call:
				work = append(work, ins.Target)
			}
		}
		last := &g.Sections[b.Sec].Insts[b.Last]
		if fallsThrough(last.Kind) && !(last.Kind == disasm.Call && NoReturn(in.PLT[last.Target])) {
			work = append(work, b.End)
		}
	}
	var unwind []span
	for _, f := range in.Unwind {
		unwind = append(unwind, span{f.Addr, f.Addr + f.Size})
	}
	uw := mergeSpans(unwind)
	g.HasUnwind = len(uw) > 0
	for bi := range g.Blocks {
		b := &g.Blocks[bi]
		b.Padding = !b.Reached && allFiller(g.Insts(b))
		b.Unwound = uw.contains(b.Start)
	}
}

// noReturn lists imported functions that never return to their caller;
// what follows a call to one is reached only if something jumps there.
var noReturn = map[string]bool{
	"abort": true, "exit": true, "_exit": true, "_Exit": true, "quick_exit": true,
	"__stack_chk_fail": true, "__chk_fail": true, "__fortify_fail": true, "__assert_fail": true,
	"__cxa_throw": true, "__cxa_rethrow": true, "_Unwind_Resume": true, "__cxa_bad_cast": true,
	"__cxa_bad_typeid": true, "__cxa_throw_bad_array_new_length": true, "__cxa_pure_virtual": true,
	"pthread_exit": true, "longjmp": true, "siglongjmp": true, "_longjmp": true, "__longjmp_chk": true,
	"err": true, "errx": true, "verr": true, "verrx": true, "__libc_start_main": true,
	"_ZSt9terminatev": true,
}

// NoReturn reports whether the imported function name never returns.
func NoReturn(name string) bool {
	if noReturn[name] {
		return true
	}
	// libstdc++'s std::__throw_* helpers: _ZSt19__throw_logic_errorPKc and kin.
	return len(name) > 12 && name[:4] == "_ZSt" && strings.Contains(name, "__throw_")
}

// span is a half-open address range.
type span struct{ lo, hi uint64 }

type spans []span

// mergeSpans sorts and merges overlapping ranges.
func mergeSpans(in []span) spans {
	sort.Slice(in, func(i, j int) bool { return in[i].lo < in[j].lo })
	var out spans
	for _, s := range in {
		if n := len(out); n > 0 && s.lo <= out[n-1].hi {
			if s.hi > out[n-1].hi {
				out[n-1].hi = s.hi
			}
			continue
		}
		out = append(out, s)
	}
	return out
}

func (ss spans) contains(a uint64) bool {
	i := sort.Search(len(ss), func(i int) bool { return ss[i].hi > a })
	return i < len(ss) && ss[i].lo <= a
}

func fallsThrough(k disasm.Kind) bool {
	switch k {
	case disasm.Jmp, disasm.JmpInd, disasm.Ret, disasm.Stop, disasm.Bad:
		return false
	}
	return true
}

// BlockAt returns the index of the block containing addr, or -1.
func (g *Graph) BlockAt(addr uint64) int {
	i := sort.Search(len(g.Blocks), func(i int) bool { return g.Blocks[i].End > addr })
	if i < len(g.Blocks) && g.Blocks[i].Start <= addr {
		return i
	}
	return -1
}

// Insts returns the instructions of block b.
func (g *Graph) Insts(b *Block) []disasm.Inst {
	return g.Sections[b.Sec].Insts[b.First : b.Last+1]
}

func (g *Graph) buildFuncs(in Input) {
	hints := append([]FuncHint(nil), in.Funcs...)
	sort.Slice(hints, func(i, j int) bool {
		if hints[i].Addr != hints[j].Addr {
			return hints[i].Addr < hints[j].Addr
		}
		return hints[i].Name > hints[j].Name // named before anonymous
	})
	for _, h := range hints {
		if n := len(g.Funcs); n > 0 && g.Funcs[n-1].Start == h.Addr {
			f := &g.Funcs[n-1]
			if f.End < h.Addr+h.Size {
				f.End = h.Addr + h.Size
			}
			continue
		}
		if !g.isBoundary(h.Addr) {
			continue
		}
		g.Funcs = append(g.Funcs, Func{Name: h.Name, Start: h.Addr, End: h.Addr + h.Size})
	}
	fi := -1
	for bi := range g.Blocks {
		b := &g.Blocks[bi]
		for fi+1 < len(g.Funcs) && g.Funcs[fi+1].Start <= b.Start {
			fi++
		}
		if !b.Reached || fi < 0 {
			continue
		}
		f := &g.Funcs[fi]
		if f.End != f.Start && b.Start >= f.End {
			continue // past the function's recorded extent: not attributed
		}
		b.Func = fi
		f.Blocks = append(f.Blocks, bi)
	}
	for fi := range g.Funcs {
		f := &g.Funcs[fi]
		f.FramePointer = g.setsFramePointer(f)
	}
}

// setsFramePointer recognises `[endbr64] push %rbp; mov %rsp, %rbp` at the
// start of a function.
func (g *Graph) setsFramePointer(f *Func) bool {
	if len(f.Blocks) == 0 {
		return false
	}
	b := &g.Blocks[f.Blocks[0]]
	code := g.Sections[b.Sec].Insts[b.First:]
	i := 0
	if i < len(code) && code[i].Kind == disasm.Nop {
		i++
	}
	if i+1 >= len(code) {
		return false
	}
	return code[i].Flags&disasm.PushRBP != 0 && code[i+1].Flags&disasm.MovRSPToRBP != 0
}

func (g *Graph) linkEdges(in Input) {
	for bi := range g.Blocks {
		b := &g.Blocks[bi]
		if !b.Reached {
			continue
		}
		last := &g.Sections[b.Sec].Insts[b.Last]
		switch last.Kind {
		case disasm.Jmp:
			b.Succs = append(b.Succs, last.Target)
		case disasm.Jcc:
			b.Succs = append(b.Succs, last.Target, b.End)
		case disasm.Call, disasm.CallInd, disasm.Other, disasm.Nop:
			b.Succs = append(b.Succs, b.End)
		}
		if b.Func < 0 {
			continue
		}
		f := &g.Funcs[b.Func]
		switch {
		case last.Kind == disasm.Call:
			if name, ok := in.PLT[last.Target]; ok {
				f.Imports = append(f.Imports, name)
			} else {
				f.Callees = append(f.Callees, last.Target)
			}
		case last.Kind == disasm.CallInd && last.Flags&disasm.RIPRel != 0:
			if name, ok := in.GOT[last.Target]; ok {
				f.Imports = append(f.Imports, name)
			}
		case last.Kind == disasm.Jmp && in.PLT[last.Target] != "":
			f.Imports = append(f.Imports, in.PLT[last.Target]) // tail call through the PLT
		}
	}
}
