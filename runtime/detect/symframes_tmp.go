package detect

import "sort"

// Stand-ins until the symbolizer's frames land (branch i13-syms).

func (s *symbolizer) frames(linkPC uint64) []Frame {
	s.load()
	f := Frame{PC: linkPC + s.bias, Module: s.name, Offset: linkPC}
	if fn, ok := lookup(s.funcs, linkPC); ok {
		f.Func = s.demangle(fn.name)
	}
	if e, ok := s.line(linkPC); ok {
		f.File, f.Line = e.file, e.line
	}
	return []Frame{f}
}

func (s *symbolizer) libFrames(pc uint64) []Frame {
	return []Frame{{PC: pc}}
}

func (s *symbolizer) module() string {
	s.load()
	return s.name
}

func (s *symbolizer) line(pc uint64) (lineEntry, bool) {
	i := sort.Search(len(s.lines), func(i int) bool { return s.lines[i].addr > pc }) - 1
	if i < 0 {
		return lineEntry{}, false
	}
	return s.lines[i], true
}
