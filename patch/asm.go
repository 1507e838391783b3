package patch

import (
	"fmt"

	"github.com/twitchyliquid64/golang-asm/asm/arch"
	"github.com/twitchyliquid64/golang-asm/obj"
	"github.com/twitchyliquid64/golang-asm/obj/x86"
	"github.com/twitchyliquid64/golang-asm/objabi"
	"golang.org/x/arch/x86/x86asm"
)

// The trampoline glue is assembled with golang-asm. Three of its habits are
// handled here, in one place:
//   - it pads jumps and calls against the Intel JCC erratum unless told not
//     to (objabi.GOAMD64), which would make sizes unpredictable;
//   - it drops relocations, so references outside the assembled block come
//     out with a zero displacement: callers patch rel32 fields themselves,
//     from the offsets this file returns;
//   - it reports invalid operand combinations through a diagnostic hook and
//     returns short output: every result is checked here and turned into an
//     error instead.

func init() { objabi.GOAMD64 = "normaljumps" }

var amd64 = arch.Set("amd64")

// assembler collects golang-asm instructions for one snippet.
type assembler struct {
	ctxt  *obj.Link
	first *obj.Prog
	last  *obj.Prog
	diags []string
}

func newAssembler() *assembler {
	a := &assembler{ctxt: obj.Linknew(amd64.LinkArch)}
	a.ctxt.Headtype = objabi.Hlinux
	a.ctxt.DiagFunc = func(format string, args ...interface{}) {
		a.diags = append(a.diags, fmt.Sprintf(format, args...))
	}
	amd64.Init(a.ctxt)
	return a
}

// add appends one instruction: as with source from and destination to.
func (a *assembler) add(as obj.As, from, to obj.Addr) *obj.Prog {
	p := a.ctxt.NewProg()
	p.As, p.From, p.To = as, from, to
	if a.first == nil {
		a.first = p
	} else {
		a.last.Link = p
	}
	a.last = p
	return p
}

// assemble returns the machine code and the offset of every instruction.
func (a *assembler) assemble() (code []byte, offsets []int, err error) {
	if a.first == nil {
		return nil, nil, nil
	}
	sym := &obj.LSym{Func: &obj.FuncInfo{Text: a.first}}
	amd64.Assemble(a.ctxt, sym, a.ctxt.NewProg)
	if len(a.diags) > 0 {
		return nil, nil, fmt.Errorf("assembler: %s", a.diags[0])
	}
	for p := a.first; p != nil; p = p.Link {
		offsets = append(offsets, int(p.Pc))
	}
	if len(sym.P) == 0 || offsets[len(offsets)-1] >= len(sym.P) {
		return nil, nil, fmt.Errorf("assembler produced %d bytes for %d instructions", len(sym.P), len(offsets))
	}
	return sym.P, offsets, nil
}

func none() obj.Addr { return obj.Addr{} }

func reg(r int16) obj.Addr { return obj.Addr{Type: obj.TYPE_REG, Reg: r} }

func imm(v int64) obj.Addr { return obj.Addr{Type: obj.TYPE_CONST, Offset: v} }

func mem(base, index int16, scale int16, disp int64) obj.Addr {
	return obj.Addr{Type: obj.TYPE_MEM, Reg: base, Index: index, Scale: scale, Offset: disp}
}

// ripMem is a RIP-relative operand whose disp32 the caller patches.
func (a *assembler) ripMem() obj.Addr {
	return obj.Addr{Type: obj.TYPE_MEM, Name: obj.NAME_EXTERN, Sym: a.ctxt.Lookup("hg.target")}
}

// goReg maps an x86asm 64-bit register to golang-asm's numbering.
func goReg(r x86asm.Reg) (int16, bool) {
	if r >= x86asm.RAX && r <= x86asm.R15 {
		return x86.REG_AX + int16(r-x86asm.RAX), true
	}
	return 0, false
}
