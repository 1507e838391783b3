package patch

import (
	"github.com/twitchyliquid64/golang-asm/obj/x86"

	"hgrewrite/abi"
)

// Annotation hooks hand the runtime what a program tells race detectors
// about its own synchronisation (docs/detector.md, "Annotations"): a call
// of a dynamic-annotation function, with the call's argument registers,
// and a Valgrind client request, whose result the runtime writes into
// rdx. Both go through the access slot as hooks (abi.HookAnnotate,
// abi.HookRequest) with a pointer to the registers, saved on the stack,
// in rdi; the entry point preserves every register, so the glue restores
// exactly what it saved.

// annotation returns the annotation hooked before the instruction at addr.
func (h *Hooks) annotation(addr uint64) (uint16, bool) {
	if h == nil {
		return 0, false
	}
	k, ok := h.Annotations[addr]
	return k, ok
}

func (h *Hooks) request(addr uint64) bool { return h != nil && h.Requests[addr] }

// annotationRegs are the argument registers of an annotation call, pushed
// so that the first ends lowest: the runtime reads them as an array.
var annotationRegs = []int16{x86.REG_R8, x86.REG_CX, x86.REG_DX, x86.REG_SI, x86.REG_DI}

// annotateGlue appends the hook of an annotation call; the info word's
// pc field holds the annotation.
func (b *builder) annotateGlue(buf []byte, kind uint16) ([]byte, error) {
	return b.savedRegsHook(buf, annotationRegs, abi.Info(uint64(kind), abi.HookAnnotate, abi.Hook))
}

// requestRegs: rdi and rsi carry the hook call, then the request's
// result (rdx, the default on entry) and the block's address (rax).
var requestRegs = []int16{x86.REG_DI, x86.REG_SI, x86.REG_DX, x86.REG_AX}

// requestGlue appends the hook of a Valgrind client request made at site:
// it leaves the request's result in rdx.
func (b *builder) requestGlue(buf []byte, site uint64) ([]byte, error) {
	return b.savedRegsHook(buf, requestRegs, abi.Info(site, abi.HookRequest, abi.Hook))
}

// savedRegsHook appends a hook call that passes the registers regs, as
// pushed in that order below the red zone and the flags, by address in
// rdi, and pops them back afterwards (the runtime may have written them).
// rdi and rsi must be among regs: the call overwrites them.
func (b *builder) savedRegsHook(buf []byte, regs []int16, info uint64) ([]byte, error) {
	var err error
	if buf, err = b.asm(buf, func(a *assembler) {
		a.add(leaq, mem(regSP, 0, 0, -redZone), reg(regSP))
		a.add(x86.APUSHFQ, none(), none())
		for _, r := range regs {
			a.add(x86.APUSHQ, reg(r), none())
		}
		a.add(movq, reg(regSP), reg(regDI))
	}); err != nil {
		return buf, err
	}
	buf = put(buf, b.t.info, int64(info))
	if buf, err = putRel(buf, b.lay.TextAddr, b.t.callSlot, b.lay.SlotAccess); err != nil {
		return buf, err
	}
	return b.asm(buf, func(a *assembler) {
		for i := len(regs) - 1; i >= 0; i-- {
			a.add(x86.APOPQ, none(), reg(regs[i]))
		}
		a.add(x86.APOPFQ, none(), none())
		a.add(leaq, mem(regSP, 0, 0, redZone), reg(regSP))
	})
}
