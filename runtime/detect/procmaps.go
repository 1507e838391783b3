package detect

import (
	"bufio"
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

// mapping is one line of /proc/<pid>/maps: [lo, hi) maps the file at
// path from file offset off. path is "" for anonymous memory, or a
// pseudo-name such as "[vdso]".
type mapping struct {
	lo, hi, off uint64
	path        string
}

// libFrames describes a run-time code address outside the main program
// (a shared library's, in the process reported on): like frames, with
// Module the library's base name ("libc.so.6") and Offset its link-time
// address in that file, from the library's .symtab and .dynsym and its
// DWARF or separate debug file when there is one. An address in no file
// gives one frame with PC, and Module when its mapping has a name.
func (s *symbolizer) libFrames(pc uint64) []Frame {
	s.mu.Lock()
	defer s.mu.Unlock()
	mp, ok := s.mappingAt(pc)
	if !ok {
		return []Frame{{PC: pc}}
	}
	if !strings.HasPrefix(mp.path, "/") {
		return []Frame{{PC: pc, Module: mp.path}}
	}
	m := s.library(mp.path)
	link, ok := m.linkAddr(mp, pc)
	if !ok {
		return []Frame{{PC: pc, Module: m.name}}
	}
	return s.moduleFrames(m, m.name, link, pc)
}

// inFile says whether run-time address pc is in a file's mapping (code
// of a library, as a return address must be; not the stack or anonymous
// memory).
func (s *symbolizer) inFile(pc uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	mp, ok := s.mappingAt(pc)
	return ok && strings.HasPrefix(mp.path, "/")
}

// library reads the ELF file at path once. The caller holds s.mu.
func (s *symbolizer) library(path string) *module {
	if m, ok := s.libs[path]; ok {
		return m
	}
	if s.libs == nil {
		s.libs = map[string]*module{}
	}
	m := openModule(path, s.debugRoot, false)
	s.libs[path] = m
	return m
}

// linkAddr turns run-time address pc, inside mapping mp of m's file, into
// the file's link-time address, through the PT_LOAD segment that holds
// pc's file offset.
func (m *module) linkAddr(mp mapping, pc uint64) (uint64, bool) {
	fileOff := pc - mp.lo + mp.off
	for _, p := range m.loads {
		if p.Off <= fileOff && fileOff < p.Off+p.Filesz {
			return fileOff - p.Off + p.Vaddr, true
		}
	}
	return 0, false
}

// mappingAt finds the mapping that holds pc, reading the maps again when
// the copy it has does not (a library loaded since). The caller holds
// s.mu.
func (s *symbolizer) mappingAt(pc uint64) (mapping, bool) {
	if mp, ok := findMapping(s.maps, pc); ok {
		return mp, true
	}
	s.maps = readMaps(s.pid)
	return findMapping(s.maps, pc)
}

func findMapping(maps []mapping, pc uint64) (mapping, bool) {
	i := sort.Search(len(maps), func(i int) bool { return maps[i].lo > pc }) - 1
	if i >= 0 && pc < maps[i].hi {
		return maps[i], true
	}
	return mapping{}, false
}

// readMaps reads the mappings of process pid (0 or this process's pid for
// /proc/self), sorted by address; nil when they cannot be read.
func readMaps(pid int) []mapping {
	path := "/proc/self/maps"
	if pid != 0 && pid != os.Getpid() {
		path = fmt.Sprintf("/proc/%d/maps", pid)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var out []mapping
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if mp, ok := parseMapsLine(sc.Text()); ok {
			out = append(out, mp)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].lo < out[j].lo })
	return out
}

// parseMapsLine parses "lo-hi perms offset dev inode   path".
func parseMapsLine(line string) (mapping, bool) {
	var f [5]string
	rest := line
	for i := range f {
		rest = strings.TrimLeft(rest, " ")
		f[i], rest, _ = strings.Cut(rest, " ")
	}
	lo, hi, ok := strings.Cut(f[0], "-")
	if !ok {
		return mapping{}, false
	}
	var mp mapping
	var err1, err2, err3 error
	mp.lo, err1 = strconv.ParseUint(lo, 16, 64)
	mp.hi, err2 = strconv.ParseUint(hi, 16, 64)
	mp.off, err3 = strconv.ParseUint(f[2], 16, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return mapping{}, false
	}
	mp.path = strings.TrimSuffix(strings.TrimLeft(rest, " "), " (deleted)")
	return mp, true
}

// loadSegments are a file's PT_LOAD program headers.
func loadSegments(f *elf.File) []elf.ProgHeader {
	var out []elf.ProgHeader
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			out = append(out, p.ProgHeader)
		}
	}
	return out
}
