package elfrw

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"

	"hgrewrite/abi"
)

// The rewritten executable gets two new loadable segments after everything
// the original maps:
//
//	data (RW): runtime header, new .dynamic, new .dynstr, new .rela.dyn
//	text (RX): trampolines
//
// The data segment comes first because its size is known before the
// trampolines are assembled, and trampolines refer to the header's slots.
// The program header table stays where it is; the two PT_LOAD entries take
// the places of PT_NOTE and PT_GNU_PROPERTY entries (the notes stay in the
// file, they are just no longer announced). Dropping PT_GNU_PROPERTY, and
// clearing the IBT and SHSTK bits in the note itself, turns CET off for the
// rewritten program: trampolines emulate calls with push+jmp, which a shadow
// stack would reject.

// The runtime header at the start of the data segment is laid out as
// package abi says.
const (
	spareDynEntries = 4
	pageSize        = 0x1000
)

// Layout is where the new segments go; it is fixed before patching starts.
type Layout struct {
	DataAddr, DataSize uint64
	DataOff            uint64 // file offset of the data segment
	TextAddr           uint64
	movePhdrs          bool // the program header table moves into the data segment
	phdrAddr, phdrNum  uint64
	dynAddr, dynSize   uint64
	strAddr, strSize   uint64
	relaAddr, relaSize uint64
	needOff            uint64 // offset of the DT_NEEDED string in the new .dynstr
	// HeaderFlags are the header's flags besides abi.HdrFlagPIE, which
	// the writer sets: what the rewriter learnt of the code
	// (abi.HdrFlagNoVEX, abi.HdrFlagNoEVEX).
	HeaderFlags uint32
}

// entrySlots is the number of runtime entry slots in the header.
const entrySlots = 3

// SlotAccess, SlotRange and SlotBatch are the addresses of the runtime
// entry slots.
func (l *Layout) SlotAccess() uint64 { return l.DataAddr + abi.HdrOffSlotAccess }
func (l *Layout) SlotRange() uint64  { return l.DataAddr + abi.HdrOffSlotRange }
func (l *Layout) SlotBatch() uint64  { return l.DataAddr + abi.HdrOffSlotBatch }

// SlotTrace is the address of the call trace's slot: the thread-pointer
// offset of the runtime's trace pointer, 0 (no tracing) until the
// runtime sets it, so it takes no relocation.
func (l *Layout) SlotTrace() uint64 { return l.DataAddr + abi.HdrOffSlotTrace }

func alignUp(v, a uint64) uint64 { return (v + a - 1) &^ (a - 1) }

const phdrSize = 56

// spareProgHeaders counts the program headers the writer may reuse.
func (b *Binary) spareProgHeaders() int {
	n := 0
	for _, p := range b.F.Progs {
		if p.Type == elf.PT_NOTE || p.Type == elf.PT_GNU_PROPERTY {
			n++
		}
	}
	return n
}

// PlanLayout chooses the addresses of the new segments.
//
// When fewer than two program headers can be reused, the table moves into
// the data segment with room for the new entries. The kernel may compute
// AT_PHDR as "first segment's address minus its offset plus e_phoff", so
// the data segment is then placed where its file offset and address keep
// that relation.
func (b *Binary) PlanLayout() (*Layout, error) {
	var end uint64
	for _, p := range b.Loads {
		if e := p.Vaddr + p.Memsz; e > end {
			end = e
		}
	}
	l := &Layout{DataAddr: alignUp(end, pageSize)}
	l.DataOff = alignCongruent(uint64(len(b.Data)), l.DataAddr)
	if b.spareProgHeaders() < 2 {
		first := b.Loads[0]
		delta := first.Vaddr - first.Off
		off := alignUp(uint64(len(b.Data)), pageSize)
		if end > delta && alignUp(end-delta, pageSize) > off {
			off = alignUp(end-delta, pageSize)
		}
		l.movePhdrs, l.DataOff, l.DataAddr = true, off, off+delta
		l.phdrNum = uint64(len(b.F.Progs)) + 2
	}
	oldStr := b.dynstr()
	if oldStr == nil {
		return nil, errorf("corrupted ELF file (no dynamic string table)")
	}
	l.phdrAddr = l.DataAddr + abi.HeaderSize
	l.dynAddr = l.phdrAddr + l.phdrNum*phdrSize
	l.dynSize = uint64(len(b.Dynamic)+4+spareDynEntries) * 16
	l.strAddr = l.dynAddr + l.dynSize
	l.needOff = uint64(len(oldStr))
	l.strSize = uint64(len(oldStr)) + uint64(len(NeededEntry)) + 1
	l.relaAddr = alignUp(l.strAddr+l.strSize, 8)
	if b.PIE {
		l.relaSize = uint64(len(b.relaDyn())) + entrySlots*24
	}
	l.DataSize = l.relaAddr + l.relaSize - l.DataAddr
	l.TextAddr = alignUp(l.DataAddr+l.DataSize, pageSize)
	if l.TextAddr >= 1<<31 && !b.PIE {
		return nil, errorf("executable too large: new code would be above 2 GiB")
	}
	return l, nil
}

// relaDyn returns the bytes of the relocation table named by DT_RELA.
func (b *Binary) relaDyn() []byte {
	addr, ok1 := b.DynVal(elf.DT_RELA)
	size, ok2 := b.DynVal(elf.DT_RELASZ)
	if !ok1 || !ok2 {
		return nil
	}
	return b.Bytes(addr, size)
}

// CodePatch is a run of code bytes to overwrite at a virtual address.
type CodePatch struct {
	Addr  uint64
	Bytes []byte
}

// Write produces the rewritten executable image.
func (b *Binary) Write(l *Layout, text []byte, retStub uint64, patches []CodePatch) ([]byte, error) {
	out := append([]byte(nil), b.Data...)
	for _, p := range patches {
		off, ok := b.Offset(p.Addr)
		if !ok || off+uint64(len(p.Bytes)) > uint64(len(out)) {
			return nil, fmt.Errorf("patch at %#x outside the file", p.Addr)
		}
		copy(out[off:], p.Bytes)
	}
	clearCETProperty(b, out)
	data, err := b.dataSegment(l, text, retStub)
	if err != nil {
		return nil, err
	}
	dataOff := l.DataOff
	out = pad(out, dataOff)
	out = append(out, data...)
	textOff := alignCongruent(uint64(len(out)), l.TextAddr)
	out = pad(out, textOff)
	out = append(out, text...)
	if err := b.writeProgHeaders(out, l, dataOff, uint64(len(data)), textOff, uint64(len(text))); err != nil {
		return nil, err
	}
	b.repointSections(out, l, dataOff)
	return out, nil
}

// repointSections updates the section headers of .dynamic, .dynstr and
// (PIE) .rela.dyn to their new copies, so that readelf, objdump and
// debuggers show what the loader uses.
func (b *Binary) repointSections(out []byte, l *Layout, dataOff uint64) {
	shoff := binary.LittleEndian.Uint64(b.Data[40:48])
	strAddr, _ := b.DynVal(elf.DT_STRTAB)
	relaAddr, hasRela := b.DynVal(elf.DT_RELA)
	for i, s := range b.F.Sections {
		var addr, size uint64
		switch {
		case s.Type == elf.SHT_DYNAMIC:
			addr, size = l.dynAddr, l.dynSize
		case s.Type == elf.SHT_STRTAB && s.Addr == strAddr && s.Addr != 0:
			addr, size = l.strAddr, l.strSize
		case b.PIE && hasRela && s.Type == elf.SHT_RELA && s.Addr == relaAddr:
			addr, size = l.relaAddr, l.relaSize
		default:
			continue
		}
		h := shoff + uint64(i)*64
		if h+64 > uint64(len(out)) {
			return
		}
		le := binary.LittleEndian
		le.PutUint64(out[h+16:], addr)                    // sh_addr
		le.PutUint64(out[h+24:], dataOff+addr-l.DataAddr) // sh_offset
		le.PutUint64(out[h+32:], size)                    // sh_size
	}
}

// alignCongruent returns the smallest offset >= off with offset ≡ addr
// (mod page size), as mmap requires.
func alignCongruent(off, addr uint64) uint64 {
	o := alignUp(off, pageSize)
	return o + addr%pageSize
}

func pad(b []byte, n uint64) []byte {
	for uint64(len(b)) < n {
		b = append(b, 0)
	}
	return b
}

func (b *Binary) dataSegment(l *Layout, text []byte, retStub uint64) ([]byte, error) {
	d := make([]byte, l.DataSize)
	le := binary.LittleEndian
	copy(d, abi.HeaderMagic)
	le.PutUint32(d[abi.HdrOffVersion:], abi.HeaderVersion)
	flags := l.HeaderFlags
	if b.PIE {
		flags |= abi.HdrFlagPIE
	}
	le.PutUint32(d[abi.HdrOffFlags:], flags)
	le.PutUint64(d[abi.HdrOffTextAddr:], l.TextAddr)
	le.PutUint64(d[abi.HdrOffTextSize:], uint64(len(text)))
	le.PutUint64(d[abi.HdrOffSlotAccess:], retStub)
	le.PutUint64(d[abi.HdrOffSlotRange:], retStub)
	le.PutUint64(d[abi.HdrOffSlotBatch:], retStub)

	// .dynstr: the old table unchanged (every old offset stays valid) plus ours.
	str := d[l.strAddr-l.DataAddr:]
	copy(str, b.dynstr())
	copy(str[l.needOff:], NeededEntry)

	// .rela.dyn: RELATIVE entries for the slots first, then the old
	// entries. First, because IRELATIVE resolvers in the program run while
	// the loader walks this table, and they may already be instrumented.
	if b.PIE {
		rela := d[l.relaAddr-l.DataAddr:]
		n := 0
		for _, slot := range []uint64{l.SlotAccess(), l.SlotRange(), l.SlotBatch()} {
			le.PutUint64(rela[n:], slot)
			le.PutUint64(rela[n+8:], uint64(elf.R_X86_64_RELATIVE))
			le.PutUint64(rela[n+16:], retStub)
			n += 24
		}
		copy(rela[n:], b.relaDyn())
	}

	// .dynamic: our DT_NEEDED first so that the runtime's symbols interpose.
	dyn := []DynEntry{{elf.DT_NEEDED, l.needOff}}
	hasRela := false
	for _, e := range b.Dynamic {
		switch e.Tag {
		case elf.DT_STRTAB:
			e.Val = l.strAddr
		case elf.DT_STRSZ:
			e.Val = l.strSize
		case elf.DT_RELA:
			hasRela = true
			if b.PIE {
				e.Val = l.relaAddr
			}
		case elf.DT_RELASZ:
			if b.PIE {
				e.Val = l.relaSize
			}
		case elf.DT_RELACOUNT:
			if b.PIE {
				e.Val += entrySlots // the leading RELATIVE entries now include the slots'
			}
		}
		dyn = append(dyn, e)
	}
	if b.PIE && !hasRela {
		dyn = append(dyn, DynEntry{elf.DT_RELA, l.relaAddr}, DynEntry{elf.DT_RELASZ, l.relaSize}, DynEntry{elf.DT_RELAENT, 24})
	}
	if uint64(len(dyn)+1)*16 > l.dynSize {
		return nil, fmt.Errorf("dynamic section overflow")
	}
	dd := d[l.dynAddr-l.DataAddr:]
	for i, e := range dyn {
		le.PutUint64(dd[i*16:], uint64(e.Tag))
		le.PutUint64(dd[i*16+8:], e.Val)
	}
	return d, nil
}

// writeProgHeaders writes the new program header table: in place, with
// the new PT_LOADs in the slots of PT_NOTE/PT_GNU_PROPERTY entries, or moved
// into the data segment with two more entries.
func (b *Binary) writeProgHeaders(out []byte, l *Layout, dataOff, dataSize, textOff, textSize uint64) error {
	f := b.F
	var keep []elf.ProgHeader
	lastLoad := -1
	for _, p := range f.Progs {
		switch p.Type {
		case elf.PT_NOTE, elf.PT_GNU_PROPERTY:
			if !l.movePhdrs {
				continue
			}
			if p.Type == elf.PT_GNU_PROPERTY {
				continue // CET off: see the file comment
			}
		case elf.PT_DYNAMIC:
			p.Vaddr, p.Paddr, p.Off = l.dynAddr, l.dynAddr, dataOff+(l.dynAddr-l.DataAddr)
			p.Filesz, p.Memsz = l.dynSize, l.dynSize
		case elf.PT_PHDR:
			if l.movePhdrs {
				p.Vaddr, p.Paddr, p.Off = l.phdrAddr, l.phdrAddr, dataOff+(l.phdrAddr-l.DataAddr)
				p.Filesz, p.Memsz = l.phdrNum*phdrSize, l.phdrNum*phdrSize
			}
		}
		keep = append(keep, p.ProgHeader)
		if p.Type == elf.PT_LOAD {
			lastLoad = len(keep) - 1
		}
	}
	n := uint64(len(f.Progs))
	if l.movePhdrs {
		n = l.phdrNum
	}
	newLoads := []elf.ProgHeader{
		{Type: elf.PT_LOAD, Flags: elf.PF_R | elf.PF_W, Off: dataOff, Vaddr: l.DataAddr, Paddr: l.DataAddr,
			Filesz: dataSize, Memsz: dataSize, Align: pageSize},
		{Type: elf.PT_LOAD, Flags: elf.PF_R | elf.PF_X, Off: textOff, Vaddr: l.TextAddr, Paddr: l.TextAddr,
			Filesz: textSize, Memsz: textSize, Align: pageSize},
	}
	all := append(append(append([]elf.ProgHeader(nil), keep[:lastLoad+1]...), newLoads...), keep[lastLoad+1:]...)
	if uint64(len(all)) > n {
		return fmt.Errorf("program header table overflow")
	}
	for uint64(len(all)) < n {
		all = append(all, elf.ProgHeader{Type: elf.PT_NULL})
	}
	var buf bytes.Buffer
	for _, p := range all {
		binary.Write(&buf, binary.LittleEndian, elf.Prog64{
			Type: uint32(p.Type), Flags: uint32(p.Flags), Off: p.Off, Vaddr: p.Vaddr, Paddr: p.Paddr,
			Filesz: p.Filesz, Memsz: p.Memsz, Align: p.Align,
		})
	}
	phoff := b.phoff()
	if l.movePhdrs {
		phoff = dataOff + (l.phdrAddr - l.DataAddr)
		binary.LittleEndian.PutUint64(out[32:], phoff)
		binary.LittleEndian.PutUint16(out[56:], uint16(n))
	}
	if phoff+uint64(buf.Len()) > uint64(len(out)) {
		return errorf("corrupted ELF file (program headers outside the file)")
	}
	copy(out[phoff:], buf.Bytes())
	return nil
}

func (b *Binary) phoff() uint64 {
	return binary.LittleEndian.Uint64(b.Data[32:40])
}

// clearCETProperty clears the x86 IBT and SHSTK feature bits in
// .note.gnu.property, so that nothing enables CET for the rewritten program.
func clearCETProperty(b *Binary, out []byte) {
	const gnuPropertyX86Feature1And = 0xc0000002
	for _, s := range b.F.Sections {
		if s.Type != elf.SHT_NOTE || s.Offset+s.Size > uint64(len(out)) {
			continue
		}
		note := out[s.Offset : s.Offset+s.Size]
		for len(note) >= 12 {
			namesz := alignUp(uint64(binary.LittleEndian.Uint32(note)), 4)
			descsz := uint64(binary.LittleEndian.Uint32(note[4:]))
			typ := binary.LittleEndian.Uint32(note[8:])
			if 12+namesz+descsz > uint64(len(note)) {
				break
			}
			desc := note[12+namesz : 12+namesz+descsz]
			if typ == 5 && bytes.HasPrefix(note[12:], []byte("GNU\x00")) {
				for len(desc) >= 8 {
					pt := binary.LittleEndian.Uint32(desc)
					sz := uint64(binary.LittleEndian.Uint32(desc[4:]))
					if 8+sz > uint64(len(desc)) {
						break
					}
					if pt == gnuPropertyX86Feature1And && sz >= 4 {
						v := binary.LittleEndian.Uint32(desc[8:])
						binary.LittleEndian.PutUint32(desc[8:], v&^3)
					}
					next := alignUp(8+sz, 8)
					if next > uint64(len(desc)) {
						break
					}
					desc = desc[next:]
				}
			}
			next := alignUp(12+namesz+descsz, 4)
			if next > uint64(len(note)) {
				break
			}
			note = note[next:]
		}
	}
}
