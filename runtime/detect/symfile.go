package detect

import (
	"bytes"
	"cmp"
	"debug/dwarf"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unsafe"
)

// defaultDebugRoot is where separate debug files are installed (gdb's
// debug-file-directory).
const defaultDebugRoot = "/usr/lib/debug"

// module is what the symbolizer knows of one ELF file (the main program
// or a shared library): its functions and data objects, and its DWARF,
// from the file itself or from its separate debug file. Addresses are the
// file's link-time addresses. A module is read once and never changes
// after, except for its DWARF index, which fills in lazily (dwarfinfo.go)
// under the symbolizer's lock.
type module struct {
	name  string // base name for reports ("prog.hg", "libc.so.6")
	funcs []sym  // sorted by addr
	objs  []sym  // sorted by addr
	dw    *dwarfIndex
	loads []elf.ProgHeader // PT_LOAD segments: a library's run-time addresses to link-time ones
	// the functions' starts by unwind information (ehframe.go), for a
	// program without symbols; read with lines only
	starts []uint64
	// its data sections (allocated, not code), to place an address that no
	// symbol names: a stripped program's variables
	data []sym
}

// openModule reads the ELF file at path, and the separate debug file it
// names when it has no DWARF or no symbol table, looked up under
// debugRoot as gdb does. A file that cannot be read gives an empty module.
// Without lines, only the symbol tables are read: a shared library's
// frames are named from them (libc's debug information alone would cost
// every report-making run 0.3 s and 28 MB).
func openModule(path, debugRoot string, lines bool) *module {
	m := &module{name: filepath.Base(path)}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
		m.name = filepath.Base(real)
	}
	f, err := elf.Open(path)
	if err != nil {
		return m
	}
	defer f.Close()
	m.loads = loadSegments(f)
	m.data = dataSections(f)
	m.addSymbols(f)
	var d *dwarf.Data
	if lines {
		d, _ = f.DWARF()
		m.starts = functionStarts(f)
	}
	if (lines && d == nil) || f.Section(".symtab") == nil {
		if df := findDebugFile(f, path, debugRoot); df != nil {
			m.addSymbols(df)
			if lines && d == nil {
				d, _ = df.DWARF()
			}
			df.Close()
		}
	}
	m.funcs = sortSyms(m.funcs)
	m.objs = sortSyms(m.objs)
	if d != nil {
		m.dw = &dwarfIndex{d: d}
	}
	return m
}

// dataSections lists f's sections that are loaded and not code (.data,
// .bss, .rodata, ...), sorted by address.
func dataSections(f *elf.File) []sym {
	var out []sym
	for _, sec := range f.Sections {
		if sec.Flags&elf.SHF_ALLOC != 0 && sec.Flags&elf.SHF_EXECINSTR == 0 && sec.Size > 0 && sec.Flags&elf.SHF_TLS == 0 {
			out = append(out, sym{name: sec.Name, addr: sec.Addr, size: sec.Size})
		}
	}
	return sortSyms(out)
}

// addSymbols adds f's functions and data objects (.symtab and .dynsym).
func (m *module) addSymbols(f *elf.File) {
	for _, typ := range []elf.SectionType{elf.SHT_SYMTAB, elf.SHT_DYNSYM} {
		for _, sec := range f.Sections {
			if sec.Type == typ {
				m.addSymbolTable(f, sec)
			}
		}
	}
}

// addSymbolTable adds the functions and data objects of one ELF64 symbol
// table. It reads the table itself rather than through elf.File.Symbols:
// names are slices of one copy of the string table, so a program with
// 10^5 symbols does not allocate 10^5 strings (node's 150000 took 0.5 s).
func (m *module) addSymbolTable(f *elf.File, sec *elf.Section) {
	const entSize = 24 // Elf64_Sym
	if f.Class != elf.ELFCLASS64 || sec.Link == 0 || int(sec.Link) >= len(f.Sections) {
		return
	}
	data, ok := sectionData(sec)
	if !ok {
		return
	}
	strs, ok := sectionData(f.Sections[sec.Link])
	if !ok {
		return
	}
	// The names are slices of the table's only copy: strs is never
	// written after this.
	strtab := unsafe.String(unsafe.SliceData(strs), len(strs))
	bo := f.ByteOrder
	m.funcs = slices.Grow(m.funcs, len(data)/entSize)
	for off := entSize; off+entSize <= len(data); off += entSize { // entry 0 is the null symbol
		e := data[off : off+entSize]
		info, shndx := e[4], elf.SectionIndex(bo.Uint16(e[6:]))
		value, size := bo.Uint64(e[8:]), bo.Uint64(e[16:])
		var list *[]sym
		switch elf.ST_TYPE(info) {
		case elf.STT_FUNC, elf.STT_GNU_IFUNC:
			list = &m.funcs
		case elf.STT_OBJECT, elf.STT_TLS:
			list = &m.objs
		default:
			continue
		}
		name := cString(strtab, bo.Uint32(e))
		if value == 0 || name == "" || shndx == elf.SHN_UNDEF {
			continue
		}
		*list = append(*list, sym{name, value, size})
	}
}

// sectionData reads an uncompressed section in one read: Section.Data
// grows its buffer as it reads, which for the symbol tables of a big
// program costs more than parsing them.
func sectionData(sec *elf.Section) ([]byte, bool) {
	if sec.Type == elf.SHT_NOBITS || sec.Flags&elf.SHF_COMPRESSED != 0 || sec.Size > 1<<31 {
		return nil, false
	}
	buf := make([]byte, sec.Size)
	_, err := sec.ReadAt(buf, 0)
	return buf, err == nil
}

// cString is the NUL-terminated string at off in a string table.
func cString(tab string, off uint32) string {
	if int(off) >= len(tab) {
		return ""
	}
	s := tab[off:]
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	return s
}

// sortSyms sorts symbols by address and drops duplicates (the same symbol
// in .symtab, .dynsym and the debug file's .symtab): lookup looks at only
// a few aliases of an address.
func sortSyms(v []sym) []sym {
	slices.SortFunc(v, func(a, b sym) int {
		if c := cmp.Compare(a.addr, b.addr); c != 0 {
			return c
		}
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		return cmp.Compare(a.size, b.size)
	})
	return slices.Compact(v)
}

// findDebugFile opens the separate debug file of f (at path), as gdb looks
// for it: by build-id under debugRoot/.build-id, then by .gnu_debuglink
// beside the file, in .debug/ beside it, and under debugRoot plus the
// file's directory. A build-id file must carry the same build-id, a
// debuglink file the CRC32 the link names. nil when none is found.
func findDebugFile(f *elf.File, path, debugRoot string) *elf.File {
	if debugRoot == "" {
		debugRoot = defaultDebugRoot
	}
	if id := buildID(f); len(id) >= 2 {
		h := hex.EncodeToString(id)
		p := filepath.Join(debugRoot, ".build-id", h[:2], h[2:]+".debug")
		if df, err := elf.Open(p); err == nil {
			if bytes.Equal(buildID(df), id) {
				return df
			}
			df.Close()
		}
	}
	name, crc, ok := debugLink(f)
	if !ok {
		return nil
	}
	dir := filepath.Dir(path)
	for _, p := range []string{
		filepath.Join(dir, name),
		filepath.Join(dir, ".debug", name),
		filepath.Join(debugRoot, dir, name),
	} {
		if sameFile(p, path) || fileCRC(p) != crc {
			continue
		}
		if df, err := elf.Open(p); err == nil {
			return df
		}
	}
	return nil
}

// buildID is the descriptor of f's NT_GNU_BUILD_ID note, nil without one.
func buildID(f *elf.File) []byte {
	for _, s := range f.Sections {
		if s.Type != elf.SHT_NOTE {
			continue
		}
		data, err := s.Data()
		if err != nil {
			continue
		}
		if id := noteDesc(data, f.ByteOrder, "GNU", 3); id != nil {
			return id
		}
	}
	return nil
}

// noteDesc finds the note of the given owner and type in a note section
// (4-byte aligned name and descriptor, as on every ELF64 Linux target).
func noteDesc(data []byte, bo binary.ByteOrder, owner string, typ uint32) []byte {
	align := func(n uint32) uint32 { return (n + 3) &^ 3 }
	for len(data) >= 12 {
		namesz, descsz, t := bo.Uint32(data), bo.Uint32(data[4:]), bo.Uint32(data[8:])
		data = data[12:]
		if uint64(align(namesz))+uint64(align(descsz)) > uint64(len(data)) {
			return nil
		}
		name := data[:namesz]
		desc := data[align(namesz) : align(namesz)+descsz]
		data = data[align(namesz)+align(descsz):]
		if t == typ && string(bytes.TrimRight(name, "\x00")) == owner {
			return desc
		}
	}
	return nil
}

// debugLink reads f's .gnu_debuglink: the debug file's name, then padding
// to 4 bytes, then the CRC32 of the debug file's contents.
func debugLink(f *elf.File) (name string, crc uint32, ok bool) {
	s := f.Section(".gnu_debuglink")
	if s == nil {
		return "", 0, false
	}
	data, err := s.Data()
	if err != nil {
		return "", 0, false
	}
	n := bytes.IndexByte(data, 0)
	off := (n + 4) &^ 3
	if n <= 0 || off+4 > len(data) {
		return "", 0, false
	}
	return filepath.Base(string(data[:n])), f.ByteOrder.Uint32(data[off:]), true
}

// fileCRC is the CRC32 (IEEE, as gdb computes it) of a file's contents;
// 0 when it cannot be read (elf.Open then fails too).
func fileCRC(path string) uint32 {
	fh, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer fh.Close()
	h := crc32.NewIEEE()
	if _, err := io.Copy(h, fh); err != nil {
		return 0
	}
	return h.Sum32()
}

func sameFile(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// dwarfIndex is a module's DWARF, indexed on demand: the compilation
// units' address ranges on the first look-up, each unit's line table and
// scopes on the first look-up inside it (dwarfinfo.go).
type dwarfIndex struct {
	d     *dwarf.Data
	cus   []cuRange // sorted by lo; nil until indexed
	ready bool
	units map[dwarf.Offset]*cuInfo
	names map[dwarf.Offset]string
}
