package elfrw

import (
	"debug/elf"
	"encoding/binary"
)

// readPLT maps GOT slots to imported symbols (from JUMP_SLOT and GLOB_DAT
// relocations) and every PLT stub to the symbol of the slot it jumps through.
//
// It recognises stubs by their indirect jump rather than by layout, so the
// lazy .plt, the IBT .plt.sec (endbr64; bnd jmp *slot), .plt.got and the
// older .plt with bnd prefixes all work: a stub starts at its entry boundary
// (the section's entry size, 16 by default) and contains `jmp *slot(%rip)`.
func (b *Binary) readPLT() error {
	b.GOT = map[uint64]string{}
	b.PLT = map[uint64]string{}
	for _, r := range b.Relocs {
		if r.Type == elf.R_X86_64_JMP_SLOT || r.Type == elf.R_X86_64_GLOB_DAT {
			if name := b.RelocSymName(r); name != "" {
				b.GOT[r.Off] = name
			}
		}
	}
	for _, s := range b.F.Sections {
		switch s.Name {
		case ".plt", ".plt.sec", ".plt.got", ".plt.bnd":
		default:
			continue
		}
		data := b.SectionData(s)
		ent := s.Entsize
		if ent != 8 && ent != 16 {
			ent = 16
			if s.Name == ".plt.got" && s.Size%16 != 0 {
				ent = 8
			}
		}
		for off := uint64(0); off+ent <= uint64(len(data)); off += ent {
			if slot, ok := pltSlot(data[off:off+ent], s.Addr+off); ok {
				if name, ok := b.GOT[slot]; ok {
					b.PLT[s.Addr+off] = name
				}
			}
		}
	}
	return nil
}

// pltSlot finds `[bnd|notrack] jmp *disp32(%rip)` (ff 25) in one PLT entry
// loaded at addr and returns the GOT slot it reads.
func pltSlot(entry []byte, addr uint64) (uint64, bool) {
	for i := 0; i+6 <= len(entry); i++ {
		if entry[i] == 0xff && entry[i+1] == 0x25 {
			disp := int32(binary.LittleEndian.Uint32(entry[i+2:]))
			return uint64(int64(addr) + int64(i+6) + int64(disp)), true
		}
	}
	return 0, false
}
