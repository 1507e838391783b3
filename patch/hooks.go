package patch

import (
	"encoding/binary"
	"fmt"

	"hgrewrite/abi"
	"hgrewrite/disasm"

	"golang.org/x/arch/x86/x86asm"
)

// Hooks are runtime calls placed at points of the control flow rather than
// at memory accesses: the condition-variable handling of dissertation
// ch. 6 marks the wait calls inside wait-enclosing loops and calls the
// runtime on every edge that leaves such a loop (ANNOTATE_WAIT), with the
// condition variable's address computed there from registers or memory.
//
// A hook is a call through the access slot with abi.Hook in the flags and
// the hook kind in the size field of the info word; the first argument is
// the computed value (0 if none).
type Hooks struct {
	// WaitCalls are call instructions to mark: the runtime is told, just
	// before the call, that the wait it makes belongs to a wait loop.
	WaitCalls map[uint64]bool
	// Exits are loop-exit edges, by the start address of the block the
	// edge leaves.
	Exits map[uint64][]ExitHook
	// LockCalls are calls that lock a mutex in functions that signal a
	// condition variable, with where the mutex is: the runtime learns the
	// mutex is used with condition variables before the first wait on it.
	LockCalls map[uint64]Value
	// Annotations are calls of dynamic-annotation functions (annotate.go):
	// before the instruction at the address (the first of an annotation
	// function, or a direct call or jump to one) the runtime gets the
	// argument registers and the annotation (abi.Ann*).
	Annotations map[uint64]uint16
	// Requests are Valgrind client requests, by the address of the
	// xchg %rbx,%rbx that ends their magic sequence: the runtime answers
	// them in rdx before it.
	Requests map[uint64]bool
}

// InstHooked reports whether a hook goes before the instruction at addr:
// hooks synchronise, so that no check may move across them (elide).
func (h *Hooks) InstHooked(addr uint64) bool {
	_, lock := h.lockCall(addr)
	_, ann := h.annotation(addr)
	return lock || ann || h.waitCall(addr) || h.request(addr)
}

// instHooks counts the hooks placed before the instruction at addr.
func (h *Hooks) instHooks(addr uint64) int {
	n := 0
	for _, on := range []bool{h.waitCall(addr), h.request(addr)} {
		if on {
			n++
		}
	}
	if _, ok := h.lockCall(addr); ok {
		n++
	}
	if _, ok := h.annotation(addr); ok {
		n++
	}
	return n
}

// ExitHook is one instrumented loop-exit edge.
type ExitHook struct {
	To     uint64 // the edge's target
	Branch bool   // the taken edge of the block's last branch; else the fall-through
	Value  Value  // the condition variable's address
}

// ValueKind says how a hook's value is computed.
type ValueKind uint8

const (
	NoValue ValueKind = iota // 0
	Const                    // link-time address Addr (relocated in PIE)
	RegPlus                  // Reg + Disp
	Load                     // 8 bytes at Reg + Disp, or at link-time address Addr if Reg is 0, plus Add
)

// Value is an expression a hook evaluates at run time.
type Value struct {
	Kind ValueKind
	Reg  x86asm.Reg
	Disp int64
	Addr uint64
	Add  int32 // Load only: added to the loaded value (the runtime does it)
}

// ExitHooked reports whether a hook runs on an edge that leaves the block
// starting at blk (elide: no check's reach goes along such an edge).
func (h *Hooks) ExitHooked(blk uint64) bool { return len(h.exits(blk)) > 0 }

func (h *Hooks) exits(blk uint64) []ExitHook {
	if h == nil {
		return nil
	}
	return h.Exits[blk]
}

func (h *Hooks) waitCall(addr uint64) bool { return h != nil && h.WaitCalls[addr] }

func (h *Hooks) lockCall(addr uint64) (Value, bool) {
	if h == nil {
		return Value{}, false
	}
	v, ok := h.LockCalls[addr]
	return v, ok
}

// hookCount is the number of hooks block insts (starting at start, ending
// at end) carries: those the trampoline can place.
func (b *builder) hookCount(start, end uint64, insts []disasm.Inst) int {
	n := 0
	for i := range insts {
		n += b.opt.Hooks.instHooks(insts[i].Addr)
	}
	exits := b.opt.Hooks.exits(start)
	if len(exits) == 0 || len(insts) == 0 {
		return n
	}
	last := &insts[len(insts)-1]
	if _, ok := branchExit(exits, last); ok {
		n++
	}
	if _, ok := fallExit(exits, end); ok && fallsThrough(last.Kind) {
		n++
	}
	return n
}

// blockHooks reports whether the block at start has hooks of any kind.
func (b *builder) blockHooks(start uint64, insts []disasm.Inst) bool {
	if len(b.opt.Hooks.exits(start)) > 0 {
		return true
	}
	for i := range insts {
		if b.opt.Hooks.InstHooked(insts[i].Addr) {
			return true
		}
	}
	return false
}

// hookGlue appends a hook call: flags and the argument registers saved,
// the value computed into rdi, the info word into rsi.
func (b *builder) hookGlue(buf []byte, site uint64, kind uint16, v Value) ([]byte, error) {
	base := b.lay.TextAddr
	buf = put(buf, b.t.enter, 0)
	var err error
	switch {
	case v.Kind == Const || v.Kind == Load && v.Reg == 0:
		buf, err = putRel(buf, base, b.t.leaRIP, v.Addr)
	case v.Kind == RegPlus || v.Kind == Load:
		var lea []byte
		lea, err = b.lea(&disasm.Inst{Mem: disasm.MemOp{Base: v.Reg, Disp: v.Disp}}, savedBytes)
		buf = append(buf, lea...)
	default:
		var lea []byte
		lea, err = b.lea(&disasm.Inst{}, savedBytes) // lea 0, %rdi
		buf = append(buf, lea...)
	}
	if err != nil {
		return buf, err
	}
	if v.Kind == Load {
		// The runtime loads the value; the site field carries the addend.
		kind |= abi.HookDeref
		site = uint64(uint32(v.Add))
	}
	buf = put(buf, b.t.info, int64(abi.Info(site, kind, abi.Hook)))
	if buf, err = putRel(buf, base, b.t.callSlot, b.lay.SlotAccess); err != nil {
		return buf, err
	}
	return put(buf, b.t.leave, 0), nil
}

// exitStub is a taken loop-exit edge moved out of line: the relocated
// branch jumps to a hook call followed by a jump to the edge's target.
type exitStub struct {
	rel32 int // offset in the trampoline text of the branch's rel32 field
	hook  ExitHook
}

// branchExit returns the exit hook of the taken edge of the block's last
// instruction, if there is one. Only direct jumps and the rel32 forms of
// conditional jumps are redirected (loop/jrcxz end in a jmp rel32 too).
func branchExit(hooks []ExitHook, last *disasm.Inst) (ExitHook, bool) {
	if last.Kind != disasm.Jmp && last.Kind != disasm.Jcc {
		return ExitHook{}, false
	}
	for _, h := range hooks {
		if h.Branch && h.To == last.Target {
			return h, true
		}
	}
	return ExitHook{}, false
}

func fallExit(hooks []ExitHook, end uint64) (ExitHook, bool) {
	for _, h := range hooks {
		if !h.Branch && h.To == end {
			return h, true
		}
	}
	return ExitHook{}, false
}

// placeStub appends an exit stub and points the branch at it.
func (b *builder) placeStub(buf []byte, s exitStub) ([]byte, error) {
	base := b.lay.TextAddr
	at := base + uint64(len(buf))
	field := buf[s.rel32 : s.rel32+4]
	if old := int64(int32(binary.LittleEndian.Uint32(field))); base+uint64(s.rel32+4)+uint64(old) != s.hook.To {
		return buf, fmt.Errorf("exit branch to %#x not found", s.hook.To)
	}
	binary.LittleEndian.PutUint32(field, uint32(int32(int64(at-(base+uint64(s.rel32+4))))))
	var err error
	if buf, err = b.hookGlue(buf, s.hook.To, abi.HookExit, s.hook.Value); err != nil {
		return buf, err
	}
	return putRel(buf, base, b.t.jmpRel, s.hook.To)
}
