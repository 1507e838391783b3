package rewrite

import (
	"bytes"

	"golang.org/x/arch/x86/x86asm"

	"hgrewrite/abi"
	"hgrewrite/cfg"
	"hgrewrite/disasm"
	"hgrewrite/elfrw"
	"hgrewrite/patch"
)

// annotationFuncs are ThreadSanitizer's dynamic-annotation functions the
// runtime acts on, by symbol name (runtime/annotations.c says what each
// does). The others of dynamic_annotations.h (AnnotateRWLockCreate,
// AnnotateMutexIsNotPHB, ...) change nothing here and are not hooked.
var annotationFuncs = map[string]uint16{
	"AnnotateHappensBefore":     abi.AnnHappensBefore,
	"AnnotateHappensAfter":      abi.AnnHappensAfter,
	"AnnotateBenignRaceSized":   abi.AnnBenignRaceSized,
	"AnnotateBenignRace":        abi.AnnBenignRace,
	"AnnotateIgnoreReadsBegin":  abi.AnnIgnoreReadsBeg,
	"AnnotateIgnoreReadsEnd":    abi.AnnIgnoreReadsEnd,
	"AnnotateIgnoreWritesBegin": abi.AnnIgnoreWritesBeg,
	"AnnotateIgnoreWritesEnd":   abi.AnnIgnoreWritesEnd,
	"AnnotateRWLockAcquired":    abi.AnnRWLockAcquired,
	"AnnotateRWLockReleased":    abi.AnnRWLockReleased,
	"AnnotateNewMemory":         abi.AnnNewMemory,
	"AnnotateCondVarSignal":     abi.AnnCondVarSignal,
	"AnnotateCondVarSignalAll":  abi.AnnCondVarSignal,
	"AnnotateCondVarWait":       abi.AnnCondVarWait,
}

// planAnnotations finds the calls of annotation functions the program
// defines itself (in a program not built with -fsanitize=thread they are
// its own, usually empty, functions, called directly: the runtime cannot
// interpose them) and the Valgrind client requests, and adds their hooks
// to h. An annotation function's entry is hooked when its first block can
// take a 5-byte jump (then every caller is seen, indirect ones too); an
// empty function at -O2 is a lone ret, too short, so each direct call or
// jump to it is hooked instead. entryFailed are functions whose entry
// hook could not be placed in an earlier round: their calls are hooked.
// It returns the entries hooked.
func planAnnotations(bin *elfrw.Binary, g *cfg.Graph, h *patch.Hooks, entryFailed map[uint64]bool) map[uint64]uint64 {
	h.Annotations = map[uint64]uint16{}
	h.Requests = clientRequests(bin, g)
	funcs := annotationEntries(bin)
	entries := map[uint64]uint64{}
	sites := map[uint64]uint16{} // function start -> annotation, hooked at its calls
	for start, kind := range funcs {
		if at, ok := patchableEntry(bin, g, start); ok && !entryFailed[start] {
			h.Annotations[at] = kind
			entries[g.Blocks[g.BlockAt(start)].Start] = start
		} else {
			sites[start] = kind
		}
	}
	if len(sites) == 0 {
		return entries
	}
	for bi := range g.Blocks {
		b := &g.Blocks[bi]
		if !b.Reached || !g.Sections[b.Sec].Instrument {
			continue
		}
		for _, in := range g.Insts(b) {
			if in.Kind != disasm.Call && in.Kind != disasm.Jmp {
				continue
			}
			if kind, ok := sites[in.Target]; ok {
				h.Annotations[in.Addr] = kind
			}
		}
	}
	return entries
}

// annotationEntries are the start addresses of the annotation functions
// the executable defines (.symtab, else .dynsym), with their annotation.
func annotationEntries(bin *elfrw.Binary) map[uint64]uint16 {
	out := map[uint64]uint16{}
	for _, s := range bin.Symbols {
		if kind, ok := annotationFuncs[s.Name]; ok && s.Func && s.Addr != 0 && bin.IsCode(s.Addr) {
			out[s.Addr] = kind
		}
	}
	return out
}

// patchableEntry returns where the hook of the function at start goes
// (after a leading endbr64, which stays in place) when its first block
// takes a jmp32: reached, instrumented, described by unwind information
// when the binary has any, and 5 bytes long after the endbr64.
func patchableEntry(bin *elfrw.Binary, g *cfg.Graph, start uint64) (uint64, bool) {
	bi := g.BlockAt(start)
	if bi < 0 || g.Blocks[bi].Start != start {
		return 0, false
	}
	b := &g.Blocks[bi]
	if !b.Reached || !g.Sections[b.Sec].Instrument || g.HasUnwind && !b.Unwound {
		return 0, false
	}
	insts := g.Insts(b)
	at := 0
	if len(insts) > 1 && isEndbr64(bin.Bytes(insts[0].Addr, uint64(insts[0].Len))) {
		at = 1
	}
	if b.End-insts[at].Addr < 5 {
		return 0, false
	}
	return insts[at].Addr, true
}

func isEndbr64(c []byte) bool { return bytes.Equal(c, []byte{0xf3, 0x0f, 0x1e, 0xfa}) }

// The Valgrind client request's magic sequence on amd64 (valgrind.h):
// rolq $3, $13, $61 and $51 of %rdi, which leave it as it was, then
// xchgq %rbx,%rbx, which asks the tool to handle the request block at
// %rax and leave the result in %rdx.
var (
	requestPreamble = []byte{
		0x48, 0xc1, 0xc7, 0x03, 0x48, 0xc1, 0xc7, 0x0d,
		0x48, 0xc1, 0xc7, 0x3d, 0x48, 0xc1, 0xc7, 0x33,
	}
	requestXchg = []byte{0x48, 0x87, 0xdb}
)

// clientRequests finds the Valgrind client requests of g's instrumented
// code, by the address of their xchg: the five instructions of the
// sequence, consecutive in one block.
func clientRequests(bin *elfrw.Binary, g *cfg.Graph) map[uint64]bool {
	out := map[uint64]bool{}
	for bi := range g.Blocks {
		b := &g.Blocks[bi]
		if !b.Reached || !g.Sections[b.Sec].Instrument {
			continue
		}
		insts := g.Insts(b)
		for i := 4; i < len(insts); i++ {
			in := &insts[i]
			if in.Op != x86asm.XCHG || !bytes.Equal(bin.Bytes(in.Addr, uint64(in.Len)), requestXchg) {
				continue
			}
			pre := uint64(len(requestPreamble))
			if insts[i-4].Addr == in.Addr-pre && bytes.Equal(bin.Bytes(in.Addr-pre, pre), requestPreamble) {
				out[in.Addr] = true
			}
		}
	}
	return out
}
