package detect

import (
	"debug/dwarf"
	"debug/elf"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// symbolizer names code and data addresses of the main program from its own
// file (/proc/self/exe): ELF symbols for functions and globals, DWARF line
// tables for file:line when the binary has them. It is loaded on the first
// report only.
type symbolizer struct {
	exe   string // the program file, "" for /proc/self/exe
	bias  uint64 // the program's load bias: a link-time address plus bias is its run-time address
	pid   int    // the process whose libraries frames are looked up in
	host  Host   // demangles C++ names
	once  sync.Once
	name  string
	funcs []sym // sorted by addr
	objs  []sym // sorted by addr
	lines []lineEntry

	demangleMu sync.Mutex
	demangled  map[string]string
}

type sym struct {
	name       string
	addr, size uint64
}

type lineEntry struct {
	addr uint64
	file string
	line int
}

func (s *symbolizer) load() {
	s.once.Do(func() {
		exe := s.exe
		if exe == "" {
			exe = "/proc/self/exe"
		}
		s.name = "program"
		if p, err := filepath.EvalSymlinks(exe); err == nil {
			s.name = filepath.Base(p)
		}
		f, err := elf.Open(exe)
		if err != nil {
			return
		}
		defer f.Close()
		s.readSymbols(f)
		if d, err := f.DWARF(); err == nil {
			s.lines = readLines(d)
		}
	})
}

// readSymbols sorts the file's functions and data objects by address.
func (s *symbolizer) readSymbols(f *elf.File) {
	syms, _ := f.Symbols()
	dyn, _ := f.DynamicSymbols()
	for _, e := range append(syms, dyn...) {
		if e.Value == 0 || e.Name == "" || e.Section == elf.SHN_UNDEF {
			continue
		}
		switch elf.ST_TYPE(e.Info) {
		case elf.STT_FUNC, elf.STT_GNU_IFUNC:
			s.funcs = append(s.funcs, sym{e.Name, e.Value, e.Size})
		case elf.STT_OBJECT, elf.STT_TLS:
			s.objs = append(s.objs, sym{e.Name, e.Value, e.Size})
		}
	}
	sortSyms(s.funcs)
	sortSyms(s.objs)
}

func sortSyms(v []sym) {
	sort.Slice(v, func(i, j int) bool { return v[i].addr < v[j].addr })
}

func readLines(d *dwarf.Data) []lineEntry {
	var out []lineEntry
	r := d.Reader()
	for {
		cu, err := r.Next()
		if err != nil || cu == nil {
			break
		}
		if cu.Tag != dwarf.TagCompileUnit {
			r.SkipChildren()
			continue
		}
		lr, err := d.LineReader(cu)
		if err != nil || lr == nil {
			r.SkipChildren()
			continue
		}
		var e dwarf.LineEntry
		for lr.Next(&e) == nil {
			if e.File != nil && !e.EndSequence {
				out = append(out, lineEntry{e.Address, e.File.Name, e.Line})
			}
		}
		r.SkipChildren()
	}
	sort.Slice(out, func(i, j int) bool { return out[i].addr < out[j].addr })
	return out
}

// lookup finds the symbol containing addr; a sized symbol wins over a
// size-0 label at the same address (such as __TMC_END__).
func lookup(v []sym, addr uint64) (sym, bool) {
	i := sort.Search(len(v), func(i int) bool { return v[i].addr > addr }) - 1
	var label sym
	found := false
	for k := i; k >= 0 && k > i-8; k-- { // a few aliases may share an address
		s := v[k]
		if addr >= s.addr && addr < s.addr+s.size {
			return s, true
		}
		if s.size == 0 && addr == s.addr && !found {
			label, found = s, true
		}
	}
	return label, found
}

// code describes a link-time code address: "func file:line (prog+0xoff)".
func (s *symbolizer) code(pc uint64) string {
	s.load()
	out := fmt.Sprintf("%#x", pc)
	if f, ok := lookup(s.funcs, pc); ok {
		out = s.demangle(f.name)
		if pc != f.addr {
			out += fmt.Sprintf("+%#x", pc-f.addr)
		}
	}
	i := sort.Search(len(s.lines), func(i int) bool { return s.lines[i].addr > pc }) - 1
	if i >= 0 {
		out += fmt.Sprintf(" %s:%d", filepath.Base(s.lines[i].file), s.lines[i].line)
	}
	return fmt.Sprintf("%s (%s+%#x)", out, s.name, pc)
}

// global names the global variable containing a link-time data address.
func (s *symbolizer) global(addr uint64) (name string, off, size uint64, ok bool) {
	s.load()
	g, ok := lookup(s.objs, addr)
	if !ok {
		return "", 0, 0, false
	}
	return s.demangle(g.name), addr - g.addr, g.size, true
}

// demangle turns a C++ symbol name into its source form (Host.Demangle:
// when the program has libstdc++ loaded); other names are returned as they
// are. Results are cached.
func (s *symbolizer) demangle(name string) string {
	if !strings.HasPrefix(name, "_Z") {
		return name
	}
	s.demangleMu.Lock()
	defer s.demangleMu.Unlock()
	if out, ok := s.demangled[name]; ok {
		return out
	}
	out := s.host.Demangle(name)
	if s.demangled == nil {
		s.demangled = map[string]string{}
	}
	s.demangled[name] = out
	return out
}
