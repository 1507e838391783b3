package detect

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// symbolizer names code and data addresses of the main program and of the
// shared libraries of the process the reports are about: ELF symbols for
// functions and globals, DWARF for inlined functions and file:line, from
// each file or from its separate debug file (symfile.go). Nothing is read
// before the first report; each file is read once, its DWARF indexed as
// look-ups need it (dwarfinfo.go). Its methods may be called from any
// thread: one lock guards the caches.
type symbolizer struct {
	exe       string // the program file, "" for /proc/self/exe
	host      Host   // demangles C++ names
	bias      uint64 // the main program's load bias: run-time minus link-time address
	pid       int    // the process whose libraries are named (/proc/<pid>/maps); 0 is this one
	debugRoot string // where separate debug files are installed, "" for /usr/lib/debug

	mu   sync.Mutex
	prog *module // the main program, nil until loaded
	name string  // its base name, for reports
	maps []mapping
	libs map[string]*module // by path

	demangleMu sync.Mutex
	demangled  map[string]string
}

type sym struct {
	name       string
	addr, size uint64
}

// init sets up the symbolizer of a detector: the program file (exe, ""
// for /proc/self/exe), its load bias and the pid of the process reported
// on (0 for this one).
//
// This process's own file is named by its path, read now: once the main
// thread has called pthread_exit, /proc/self/exe can no longer be read
// (the kernel drops the link with the thread group leader's memory), and
// every report after that named bare addresses in "program" (an
// outsider's program whose main thread exits first: 5 runs of 5). The
// link stays the fallback, for a path that cannot be read.
func (s *symbolizer) init(exe string, host Host, bias uint64, pid int) {
	if exe == "" && (pid == 0 || pid == os.Getpid()) {
		if p, err := os.Readlink("/proc/self/exe"); err == nil && filepath.IsAbs(p) {
			if _, err := os.Stat(p); err == nil {
				exe = p
			}
		}
	}
	s.exe, s.host, s.bias, s.pid = exe, host, bias, pid
}

// load reads the main program's file on first use; the caller holds s.mu.
func (s *symbolizer) load() *module {
	if s.prog == nil {
		exe := s.exe
		if exe == "" {
			exe = "/proc/self/exe"
		}
		s.prog = openModule(exe, s.debugRoot, true)
		s.name = "program"
		if p, err := filepath.EvalSymlinks(exe); err == nil {
			s.name = filepath.Base(p)
		}
	}
	return s.prog
}

// module is the main program's file name, as reports name it.
func (s *symbolizer) module() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.load()
	return s.name
}

// frames describes the main program's code at a link-time address: the
// functions inlined there, innermost first (Inlined set), then the
// function they are inlined into. An inlined frame's File and Line are
// where its code is; every other frame's are the call site of the frame
// before it. PC is the run-time address (linkPC plus the program's load
// bias), Module the program's file name, Offset linkPC. An address with
// no symbol and no debug information still gives one frame.
func (s *symbolizer) frames(linkPC uint64) []Frame {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.load()
	return s.moduleFrames(m, s.name, linkPC, linkPC+s.bias)
}

// function is the start of the main program's function that holds
// link-time address pc: by its ELF symbol, else (a stripped program) by
// the unwind information's table of functions.
func (s *symbolizer) function(pc uint64) (uint64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.load()
	if fn, ok := lookup(m.funcs, pc); ok && fn.size > 0 {
		return fn.addr, true
	}
	return startOf(m.starts, pc) // a stripped program: by its unwind information
}

// tailCallee is a function that a function of the main program may end
// with a tail call to, as its DWARF call sites say: its start when the
// call site names a definition with code, and its (linkage) name.
type tailCallee struct {
	start uint64 // 0 when unknown (a declaration: another file's, a library's; an indirect call)
	name  string // "" for an indirect call
	after uint64 // the link-time address after the jump, 0 when unknown
}

// tailCallees are the functions the main program's function at link-time
// pc may tail-call.
func (s *symbolizer) tailCallees(pc uint64) []tailCallee {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.load()
	if m.dw == nil {
		return nil
	}
	chain, _ := m.dw.chain(pc)
	if len(chain) == 0 {
		return nil
	}
	var out []tailCallee
	for _, c := range chain[0].tailCalls {
		if c.callee == 0 {
			out = append(out, tailCallee{after: c.after}) // indirect
			continue
		}
		lo, _ := m.dw.lowPC(c.callee)
		out = append(out, tailCallee{lo, m.dw.dieName(c.callee), c.after})
	}
	return out
}

// callee is the start of the function the main program's call returning
// to link-time address after calls, as its DWARF call site says.
func (s *symbolizer) callee(after uint64) (uint64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.load()
	if m.dw == nil {
		return 0, false
	}
	chain, _ := m.dw.chain(after - 1)
	if len(chain) == 0 {
		return 0, false
	}
	for _, c := range chain[0].calls {
		if c.after == after {
			lo, ok := m.dw.lowPC(c.callee)
			return lo, ok
		}
	}
	return 0, false
}

// tailReaches says whether the main program's function at link-time pc
// may, through up to depth tail calls, have handed its frame to the
// function that starts at start (0: unknown) or is named name ("":
// unknown).
func (s *symbolizer) tailReaches(pc, start uint64, name string, depth int) bool {
	for _, c := range s.tailCallees(pc) {
		if c.start != 0 && c.start == start || name != "" && c.name == name {
			return true
		}
		if depth > 1 && c.start != 0 && s.tailReaches(c.start, start, name, depth-1) {
			return true
		}
	}
	return false
}

// moduleFrames symbolises link-time address link of module m (reported
// as name), whose run-time address is pc. The caller holds s.mu.
func (s *symbolizer) moduleFrames(m *module, name string, link, pc uint64) []Frame {
	base := Frame{PC: pc, Module: name, Offset: link}
	var chain []*scope
	var u *cuInfo
	if m.dw != nil {
		chain, u = m.dw.chain(link)
	}
	var loc srcLoc
	if u != nil {
		loc = u.line(link)
	}
	out := make([]Frame, 0, len(chain)+1)
	for i := len(chain) - 1; i > 0; i-- { // the inlined scopes, innermost first
		f := base
		f.Func = s.demangle(m.dw.dieName(chain[i].die))
		f.File, f.Line, f.Column = loc.file, loc.line, loc.column
		f.Inlined = true
		out = append(out, f)
		loc = u.callSite(chain[i])
	}
	f := base
	f.File, f.Line, f.Column = loc.file, loc.line, loc.column
	if fn, ok := lookup(m.funcs, link); ok {
		f.Func = s.demangle(fn.name)
	} else if len(chain) > 0 {
		f.Func = s.demangle(m.dw.dieName(chain[0].die))
	}
	return append(out, f)
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

// global names the global variable containing a link-time data address.
func (s *symbolizer) global(addr uint64) (name string, off, size uint64, ok bool) {
	s.mu.Lock()
	g, ok := lookup(s.load().objs, addr)
	s.mu.Unlock()
	if !ok {
		return "", 0, 0, false
	}
	return s.demangle(g.name), addr - g.addr, g.size, true
}

// section names the data section of the program that holds a link-time
// address no global names; named says whether the program has names for
// its variables at all (a stripped one has none, unless its debug file
// was found).
func (s *symbolizer) section(addr uint64) (name string, off uint64, named, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.load()
	sec, ok := lookup(m.data, addr)
	if !ok || sec.size == 0 {
		return "", 0, false, false
	}
	return sec.name, addr - sec.addr, len(m.objs) > 0, true
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
