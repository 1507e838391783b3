// Package elfrw reads x86-64 ELF executables and writes their rewritten
// form.
//
// Reading (this file, plt.go, ehframe.go) gives the rest of hgrewrite what it
// needs to know about a binary: its loadable segments and sections, the
// dynamic section, dynamic and static symbols, relocations, the imported
// symbol behind every PLT stub and GOT slot, the function ranges and C++
// landing pads of the exception tables, and every code address that data
// refers to. Writing (write.go) produces the output executable: original
// bytes kept where they were except for patched code, new loadable segments
// appended, the runtime library added as the first DT_NEEDED.
package elfrw

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
)

// RuntimeLibName is the file name of the runtime library that rewritten
// executables load; it sits beside the rewritten executable.
const RuntimeLibName = "libhgrt.so"

// NeededEntry is the DT_NEEDED string a rewritten executable carries.
const NeededEntry = "$ORIGIN/" + RuntimeLibName

// Symbol is a named address from .symtab or .dynsym.
type Symbol struct {
	Name string
	Addr uint64
	Size uint64
	Func bool // STT_FUNC or STT_GNU_IFUNC
}

// Reloc is one Elf64_Rela entry.
type Reloc struct {
	Off    uint64
	Type   elf.R_X86_64
	Sym    uint32
	Addend int64
}

// DynEntry is one entry of the dynamic section.
type DynEntry struct {
	Tag elf.DynTag
	Val uint64
}

// Binary is a parsed input executable.
type Binary struct {
	Data    []byte
	F       *elf.File
	PIE     bool
	Entry   uint64
	Loads   []elf.ProgHeader
	Dynamic []DynEntry
	Needed  []string

	Symbols     []Symbol          // sorted by address
	DynSyms     []elf.Symbol      // .dynsym, index i+1 in the file
	Relocs      []Reloc           // .rela.dyn and .rela.plt
	PLT         map[uint64]string // PLT stub address -> imported symbol
	GOT         map[uint64]string // GOT slot address -> imported symbol
	FDEs        []FDE
	LandingPads []uint64
	// PadsUnknown are the functions (FDEs) whose exception table did not
	// parse: their landing pads, entered by the unwinder, are not among
	// LandingPads.
	PadsUnknown []FDE
	CodePtrs    []uint64 // code addresses stored in data (pointers, relocations, init/fini arrays)
}

// Error is a problem with the input file, worded for the user.
type Error struct {
	Msg string
	err error // the sentinel it is an instance of, or nil
}

func (e *Error) Error() string { return e.Msg }

// Unwrap gives the sentinel, so that errors.Is tells apart the one
// problem callers act on: ErrAlreadyRewritten.
func (e *Error) Unwrap() error { return e.err }

// ErrAlreadyRewritten is what the *Error for an input that loads the
// runtime library wraps: the input is hgrewrite's output. The rewriter's
// check that its output parses expects exactly this error.
var ErrAlreadyRewritten = errors.New("already rewritten by hgrewrite")

func errorf(format string, args ...any) error { return &Error{Msg: fmt.Sprintf(format, args...)} }

// Open reads and validates the executable at path.
func Open(path string) (*Binary, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(data)
}

// Parse validates and parses an executable image held in memory. It never
// panics: a malformed file gives an *Error.
func Parse(data []byte) (b *Binary, err error) {
	defer func() {
		if r := recover(); r != nil {
			b, err = nil, errorf("corrupted ELF file (%v)", r)
		}
	}()
	if len(data) < 4 || !bytes.Equal(data[:4], []byte(elf.ELFMAG)) {
		return nil, errorf("not an ELF file")
	}
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return nil, errorf("corrupted ELF file (%v)", err)
	}
	b = &Binary{Data: data, F: f, Entry: f.Entry}
	if err := b.validate(); err != nil {
		return nil, err
	}
	for _, step := range []func() error{b.readDynamic, b.readSymbols, b.readRelocs, b.readPLT, b.readEH, b.readCodePtrs} {
		if err := step(); err != nil {
			return nil, err
		}
	}
	return b, nil
}

func (b *Binary) validate() error {
	f := b.F
	if f.Class != elf.ELFCLASS64 || f.Machine != elf.EM_X86_64 {
		return errorf("not an x86-64 executable (%v, %v); only x86-64 is supported", f.Class, f.Machine)
	}
	if f.Data != elf.ELFDATA2LSB {
		return errorf("corrupted ELF file (big-endian x86-64)")
	}
	hasInterp, hasDyn := false, false
	for _, p := range f.Progs {
		switch p.Type {
		case elf.PT_LOAD:
			if p.Off+p.Filesz > uint64(len(b.Data)) || p.Filesz > p.Memsz {
				return errorf("corrupted ELF file (a loadable segment lies outside the file)")
			}
			b.Loads = append(b.Loads, p.ProgHeader)
		case elf.PT_INTERP:
			hasInterp = true
		case elf.PT_DYNAMIC:
			hasDyn = true
		}
	}
	switch f.Type {
	case elf.ET_EXEC:
	case elf.ET_DYN:
		if !hasInterp && b.isStaticPIE() {
			return errorf("statically linked executable (static PIE): not supported, the runtime is loaded as a shared library (link dynamically)")
		}
		if !hasInterp {
			return errorf("shared library, not an executable (shared libraries are not supported yet)")
		}
		b.PIE = true
	case elf.ET_REL:
		return errorf("relocatable object file, not an executable: link it first")
	case elf.ET_CORE:
		return errorf("core dump, not an executable")
	default:
		return errorf("not an executable (ELF type %v)", f.Type)
	}
	if !hasInterp || !hasDyn {
		return errorf("statically linked executable: not supported, the runtime is loaded as a shared library (link dynamically)")
	}
	if len(b.Loads) == 0 {
		return errorf("corrupted ELF file (no loadable segment)")
	}
	return nil
}

// isStaticPIE tells a static PIE (ET_DYN, no interpreter, DF_1_PIE) from a
// shared library.
func (b *Binary) isStaticPIE() bool {
	const df1PIE = 0x08000000
	raw, _, err := b.dynamicBytes()
	if err != nil {
		return false
	}
	for i := 0; i+16 <= len(raw); i += 16 {
		tag := elf.DynTag(binary.LittleEndian.Uint64(raw[i:]))
		if tag == elf.DT_NULL {
			break
		}
		if tag == elf.DT_FLAGS_1 && binary.LittleEndian.Uint64(raw[i+8:])&df1PIE != 0 {
			return true
		}
	}
	return false
}

// Offset maps a virtual address to its file offset.
func (b *Binary) Offset(addr uint64) (uint64, bool) {
	for _, p := range b.Loads {
		if addr >= p.Vaddr && addr < p.Vaddr+p.Filesz {
			return p.Off + addr - p.Vaddr, true
		}
	}
	return 0, false
}

// Bytes returns n bytes of file-backed memory at addr, or nil.
func (b *Binary) Bytes(addr, n uint64) []byte {
	off, ok := b.Offset(addr)
	if !ok || off+n > uint64(len(b.Data)) || off+n < off {
		return nil
	}
	return b.Data[off : off+n]
}

// Uint64At reads a little-endian 64-bit word at addr.
func (b *Binary) Uint64At(addr uint64) (uint64, bool) {
	p := b.Bytes(addr, 8)
	if p == nil {
		return 0, false
	}
	return binary.LittleEndian.Uint64(p), true
}

// ExecSections returns the sections that hold executable code.
func (b *Binary) ExecSections() []*elf.Section {
	var out []*elf.Section
	for _, s := range b.F.Sections {
		if s.Flags&elf.SHF_EXECINSTR != 0 && s.Type == elf.SHT_PROGBITS && s.Size > 0 {
			out = append(out, s)
		}
	}
	return out
}

// SectionData returns a section's bytes from the file image.
func (b *Binary) SectionData(s *elf.Section) []byte {
	if s.Type == elf.SHT_NOBITS || s.Offset+s.Size > uint64(len(b.Data)) {
		return nil
	}
	return b.Data[s.Offset : s.Offset+s.Size]
}

// IsCode reports whether addr lies in an executable section.
func (b *Binary) IsCode(addr uint64) bool {
	for _, s := range b.F.Sections {
		if s.Flags&elf.SHF_EXECINSTR != 0 && addr >= s.Addr && addr < s.Addr+s.Size {
			return true
		}
	}
	return false
}

// dynamicBytes returns the contents of PT_DYNAMIC.
func (b *Binary) dynamicBytes() ([]byte, uint64, error) {
	for _, p := range b.F.Progs {
		if p.Type == elf.PT_DYNAMIC {
			if p.Off+p.Filesz > uint64(len(b.Data)) {
				return nil, 0, errorf("corrupted ELF file (dynamic segment outside the file)")
			}
			return b.Data[p.Off : p.Off+p.Filesz], p.Vaddr, nil
		}
	}
	return nil, 0, errorf("statically linked executable: no dynamic segment")
}

func (b *Binary) readDynamic() error {
	raw, _, err := b.dynamicBytes()
	if err != nil {
		return err
	}
	for i := 0; i+16 <= len(raw); i += 16 {
		e := DynEntry{elf.DynTag(binary.LittleEndian.Uint64(raw[i:])), binary.LittleEndian.Uint64(raw[i+8:])}
		if e.Tag == elf.DT_NULL {
			break
		}
		b.Dynamic = append(b.Dynamic, e)
	}
	strtab := b.dynstr()
	for _, e := range b.Dynamic {
		if e.Tag == elf.DT_NEEDED {
			name, ok := cString(strtab, e.Val)
			if !ok {
				return errorf("corrupted ELF file (bad DT_NEEDED string)")
			}
			b.Needed = append(b.Needed, name)
			if strings.HasSuffix(name, RuntimeLibName) {
				return &Error{Msg: fmt.Sprintf("already rewritten by hgrewrite (it loads %s); rewrite the original program instead", name),
					err: ErrAlreadyRewritten}
			}
		}
	}
	return nil
}

// DynVal returns the value of the first dynamic entry with tag t.
func (b *Binary) DynVal(t elf.DynTag) (uint64, bool) {
	for _, e := range b.Dynamic {
		if e.Tag == t {
			return e.Val, true
		}
	}
	return 0, false
}

// dynstr returns the dynamic string table named by DT_STRTAB.
func (b *Binary) dynstr() []byte {
	addr, ok1 := b.DynVal(elf.DT_STRTAB)
	size, ok2 := b.DynVal(elf.DT_STRSZ)
	if !ok1 || !ok2 {
		return nil
	}
	return b.Bytes(addr, size)
}

func cString(tab []byte, off uint64) (string, bool) {
	if off >= uint64(len(tab)) {
		return "", false
	}
	end := bytes.IndexByte(tab[off:], 0)
	if end < 0 {
		return "", false
	}
	return string(tab[off : off+uint64(end)]), true
}

func (b *Binary) readSymbols() error {
	type symKey struct {
		addr uint64
		name string
	}
	seen := map[symKey]bool{}
	add := func(syms []elf.Symbol) {
		for _, s := range syms {
			typ := elf.ST_TYPE(s.Info)
			if s.Section == elf.SHN_UNDEF || s.Value == 0 || s.Name == "" {
				continue
			}
			if typ != elf.STT_FUNC && typ != elf.STT_OBJECT && typ != elf.STT_GNU_IFUNC && typ != elf.STT_NOTYPE {
				continue
			}
			key := symKey{s.Value, s.Name}
			if seen[key] {
				continue
			}
			seen[key] = true
			b.Symbols = append(b.Symbols, Symbol{Name: s.Name, Addr: s.Value, Size: s.Size,
				Func: typ == elf.STT_FUNC || typ == elf.STT_GNU_IFUNC})
		}
	}
	if syms, err := b.F.Symbols(); err == nil {
		add(syms)
	}
	dyn, err := b.F.DynamicSymbols()
	if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
		return errorf("corrupted ELF file (dynamic symbols: %v)", err)
	}
	b.DynSyms = dyn
	add(dyn)
	sort.Slice(b.Symbols, func(i, j int) bool { return b.Symbols[i].Addr < b.Symbols[j].Addr })
	return nil
}

func (b *Binary) readRelocs() error {
	for _, s := range b.F.Sections {
		if s.Type != elf.SHT_RELA {
			continue
		}
		data := b.SectionData(s)
		if data == nil && s.Size > 0 {
			return errorf("corrupted ELF file (relocation section %s outside the file)", s.Name)
		}
		for i := 0; i+24 <= len(data); i += 24 {
			info := binary.LittleEndian.Uint64(data[i+8:])
			b.Relocs = append(b.Relocs, Reloc{
				Off:    binary.LittleEndian.Uint64(data[i:]),
				Type:   elf.R_X86_64(info & 0xffffffff),
				Sym:    uint32(info >> 32),
				Addend: int64(binary.LittleEndian.Uint64(data[i+16:])),
			})
		}
	}
	return nil
}

// RelocSymName names the dynamic symbol a relocation refers to.
func (b *Binary) RelocSymName(r Reloc) string {
	if r.Sym == 0 || int(r.Sym) > len(b.DynSyms) {
		return ""
	}
	return b.DynSyms[r.Sym-1].Name
}

func (b *Binary) readEH() error {
	eh := b.F.Section(".eh_frame")
	if eh == nil {
		return nil
	}
	fdes, _ := ParseEHFrame(b.SectionData(eh), eh.Addr) // keep what parsed; a partial table only loses hints
	b.FDEs = fdes
	gx := b.F.Section(".gcc_except_table")
	var data []byte
	if gx != nil {
		data = b.SectionData(gx)
	}
	for _, f := range fdes {
		if f.LSDA == 0 {
			continue
		}
		if gx == nil {
			b.PadsUnknown = append(b.PadsUnknown, f)
			continue
		}
		pads, err := LandingPads(data, gx.Addr, f.LSDA, f.Start)
		if err != nil {
			b.PadsUnknown = append(b.PadsUnknown, f)
		}
		b.LandingPads = append(b.LandingPads, pads...)
	}
	return nil
}

// readCodePtrs collects every code address that data refers to: relocation
// targets and addends (PIE), init/fini arrays and, in position-dependent
// executables, every aligned 64-bit word of non-executable data that holds a
// code address. Over-collecting only makes basic blocks smaller; missing one
// could let the patcher overwrite an entry point.
func (b *Binary) readCodePtrs() error {
	for _, r := range b.Relocs {
		switch r.Type {
		case elf.R_X86_64_RELATIVE, elf.R_X86_64_IRELATIVE:
			if b.IsCode(uint64(r.Addend)) {
				b.CodePtrs = append(b.CodePtrs, uint64(r.Addend))
			}
		case elf.R_X86_64_64, elf.R_X86_64_GLOB_DAT:
			if int(r.Sym) <= len(b.DynSyms) && r.Sym > 0 {
				s := b.DynSyms[r.Sym-1]
				if s.Section != elf.SHN_UNDEF && b.IsCode(s.Value+uint64(r.Addend)) {
					b.CodePtrs = append(b.CodePtrs, s.Value+uint64(r.Addend))
				}
			}
		}
	}
	for _, s := range b.F.Sections {
		if s.Flags&elf.SHF_ALLOC == 0 || s.Flags&elf.SHF_EXECINSTR != 0 || s.Type == elf.SHT_NOBITS {
			continue
		}
		if b.PIE && s.Type != elf.SHT_INIT_ARRAY && s.Type != elf.SHT_FINI_ARRAY && s.Type != elf.SHT_PREINIT_ARRAY {
			continue
		}
		data := b.SectionData(s)
		start := (8 - s.Addr%8) % 8
		for i := start; i+8 <= uint64(len(data)); i += 8 {
			v := binary.LittleEndian.Uint64(data[i:])
			if v != 0 && b.IsCode(v) {
				b.CodePtrs = append(b.CodePtrs, v)
			}
		}
	}
	return nil
}
