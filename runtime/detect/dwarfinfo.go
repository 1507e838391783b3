package detect

import (
	"debug/dwarf"
	"sort"
)

// cuRange is one address range of a compilation unit.
type cuRange struct {
	lo, hi uint64
	cu     dwarf.Offset
}

// cuInfo is what one compilation unit says about its code: its line table
// and the functions it defines, with what is inlined into them.
type cuInfo struct {
	lines []lineEntry       // by address, sequence by sequence (see readLineTable)
	files []*dwarf.LineFile // the line table's files, for DW_AT_call_file
	funcs []scopeRange      // the functions' ranges, sorted by lo
}

// lineEntry is one row of a line table; end marks the end of a sequence
// (the address past its last instruction, which has no line).
type lineEntry struct {
	addr   uint64
	file   string
	line   int
	column int
	end    bool
}

// scope is a DW_TAG_subprogram with code, or a DW_TAG_inlined_subroutine
// inside one: its ranges, where its name comes from, the call site of an
// inlined one, and what is inlined into it.
type scope struct {
	ranges   [][2]uint64
	die      dwarf.Offset // the DIE, named through its origin (dieName)
	callFile int          // index into cuInfo.files, inlined scopes only
	callLine int
	callCol  int
	inlined  []*scope
	// the functions a subprogram's code tail-calls (DW_TAG_call_site with
	// DW_AT_call_tail_call): reportstack.go, calltrace.go
	tailCalls []callSite
	// the functions it calls directly, where the call returns to
	// (calltrace.go)
	calls []callSite
}

// callSite is a call or tail call whose callee is known: the callee's
// DIE, and the address after the call or jump (DW_AT_call_return_pc; 0
// when not given).
type callSite struct {
	callee dwarf.Offset
	after  uint64
}

type scopeRange struct {
	lo, hi uint64
	s      *scope
}

// srcLoc is a source position, from the line table or a call site.
type srcLoc struct {
	file         string
	line, column int
}

// chain returns the scopes containing pc, outermost (the function) first,
// and the unit they are in; nil when pc is in no unit or no function.
func (x *dwarfIndex) chain(pc uint64) ([]*scope, *cuInfo) {
	u := x.unit(pc)
	if u == nil {
		return nil, nil
	}
	i := sort.Search(len(u.funcs), func(i int) bool { return u.funcs[i].lo > pc }) - 1
	if i < 0 || pc >= u.funcs[i].hi {
		return nil, u
	}
	out := []*scope{u.funcs[i].s}
	for s := u.funcs[i].s; ; {
		next := childAt(s, pc)
		if next == nil {
			return out, u
		}
		out = append(out, next)
		s = next
	}
}

func childAt(s *scope, pc uint64) *scope {
	for _, c := range s.inlined {
		if inRanges(c.ranges, pc) {
			return c
		}
	}
	return nil
}

func inRanges(rs [][2]uint64, pc uint64) bool {
	for _, r := range rs {
		if r[0] <= pc && pc < r[1] {
			return true
		}
	}
	return false
}

// line is the line table's position of pc in unit u, zero when it has
// none (pc lies past the end of its sequence or before every row).
func (u *cuInfo) line(pc uint64) srcLoc {
	i := sort.Search(len(u.lines), func(i int) bool { return u.lines[i].addr > pc }) - 1
	if i < 0 || u.lines[i].end {
		return srcLoc{}
	}
	e := u.lines[i]
	return srcLoc{e.file, e.line, e.column}
}

// callSite is where the inlined scope s was called from.
func (u *cuInfo) callSite(s *scope) srcLoc {
	loc := srcLoc{line: s.callLine, column: s.callCol}
	if s.callFile >= 0 && s.callFile < len(u.files) && u.files[s.callFile] != nil {
		loc.file = u.files[s.callFile].Name
	}
	return loc
}

// unit returns the compilation unit whose ranges hold pc, reading it on
// first use; nil when none does.
func (x *dwarfIndex) unit(pc uint64) *cuInfo {
	if !x.ready {
		x.indexUnits()
	}
	i := sort.Search(len(x.cus), func(i int) bool { return x.cus[i].lo > pc }) - 1
	// Units' ranges do not overlap, but a unit with an empty or bogus
	// range may sit before the right one: look back a little.
	for k := i; k >= 0 && k > i-4; k-- {
		if pc < x.cus[k].hi {
			return x.readUnit(x.cus[k].cu)
		}
	}
	return nil
}

// indexUnits reads the ranges of every compilation unit, not their
// contents: the reader jumps from unit to unit.
func (x *dwarfIndex) indexUnits() {
	x.ready = true
	x.units = map[dwarf.Offset]*cuInfo{}
	x.names = map[dwarf.Offset]string{}
	r := x.d.Reader()
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			break
		}
		if e.Tag == dwarf.TagCompileUnit {
			rs, _ := x.d.Ranges(e)
			for _, rg := range rs {
				if rg[0] < rg[1] {
					x.cus = append(x.cus, cuRange{rg[0], rg[1], e.Offset})
				}
			}
		}
		r.SkipChildren()
	}
	sort.Slice(x.cus, func(i, j int) bool { return x.cus[i].lo < x.cus[j].lo })
}

// readUnit reads the line table and the scopes of the unit at off, once.
func (x *dwarfIndex) readUnit(off dwarf.Offset) *cuInfo {
	if u, ok := x.units[off]; ok {
		return u
	}
	u := &cuInfo{}
	x.units[off] = u
	r := x.d.Reader()
	r.Seek(off)
	cu, err := r.Next()
	if err != nil || cu == nil {
		return u
	}
	u.lines, u.files = readLineTable(x.d, cu)
	x.readScopes(r, u)
	sort.Slice(u.funcs, func(i, j int) bool { return u.funcs[i].lo < u.funcs[j].lo })
	return u
}

// readLineTable reads a unit's line table. Rows keep their order inside a
// sequence (of several rows at one address the last one describes the
// code there); sequences are sorted by their first address, so that a
// search for the last row at or below an address finds the sequence that
// holds it, or the end row of the one before.
func readLineTable(d *dwarf.Data, cu *dwarf.Entry) ([]lineEntry, []*dwarf.LineFile) {
	lr, err := d.LineReader(cu)
	if err != nil || lr == nil {
		return nil, nil
	}
	var seqs [][]lineEntry
	var cur []lineEntry
	var e dwarf.LineEntry
	for lr.Next(&e) == nil {
		le := lineEntry{addr: e.Address, line: e.Line, column: e.Column, end: e.EndSequence}
		if e.File != nil {
			le.file = e.File.Name
		}
		cur = append(cur, le)
		if e.EndSequence {
			seqs = append(seqs, cur)
			cur = nil
		}
	}
	sort.SliceStable(seqs, func(i, j int) bool { return seqs[i][0].addr < seqs[j][0].addr })
	var out []lineEntry
	for _, s := range seqs {
		out = append(out, s...)
	}
	return out, lr.Files()
}

// readScopes walks the unit's DIEs after the unit entry: every subprogram
// with code becomes a function of the unit, every inlined subroutine a
// scope inside the innermost scope around it (through lexical blocks).
// Children that cannot hold code (types, variables, call sites) are
// skipped.
func (x *dwarfIndex) readScopes(r *dwarf.Reader, u *cuInfo) {
	var stack []*scope // the scope around each open DIE with children
	var fn *scope      // the subprogram being read, for its tail calls
	depth := 1         // the unit's children are open
	for depth > 0 {
		e, err := r.Next()
		if err != nil || e == nil {
			return
		}
		if e.Tag == 0 {
			depth--
			stack = stack[:len(stack)-min(1, len(stack))]
			continue
		}
		var outer *scope
		if len(stack) > 0 {
			outer = stack[len(stack)-1]
		}
		inner := outer
		switch e.Tag {
		case dwarf.TagSubprogram:
			inner = x.newScope(e, nil)
			fn = inner
			if inner != nil {
				for _, rg := range inner.ranges {
					u.funcs = append(u.funcs, scopeRange{rg[0], rg[1], inner})
				}
			}
		case dwarf.TagInlinedSubroutine:
			if outer != nil {
				if s := x.newScope(e, outer); s != nil {
					inner = s
				}
			}
		case dwarf.TagLexDwarfBlock, dwarf.TagNamespace, dwarf.TagModule:
		case tagCallSite, tagGNUCallSite:
			if to, tail, ok := callDIE(e); ok && fn != nil && outer != nil {
				after, _ := e.Val(attrCallReturnPC).(uint64)
				if tail {
					fn.tailCalls = append(fn.tailCalls, callSite{to, after})
				} else if after != 0 {
					fn.calls = append(fn.calls, callSite{to, after})
				}
			}
			if e.Children {
				r.SkipChildren()
			}
			continue
		default:
			if e.Children {
				r.SkipChildren()
			}
			continue
		}
		if e.Children {
			depth++
			stack = append(stack, inner)
		}
	}
}

// The call-site DIEs (DWARF 5, and GCC's extension before it) and their
// attributes that say a call is a tail call and to what; Go's
// debug/dwarf has no names for them.
const (
	tagCallSite      dwarf.Tag  = 0x48
	tagGNUCallSite   dwarf.Tag  = 0x4109
	attrCallReturnPC dwarf.Attr = 0x7d
	attrCallOrigin   dwarf.Attr = 0x7f
	attrCallTailCall dwarf.Attr = 0x82
	attrGNUTailCall  dwarf.Attr = 0x2115
)

// callDIE is the DIE of the function a call-site DIE calls, and whether
// the call is a tail call. An indirect tail call is kept with callee 0
// (its jump's place still says where the function handed its frame on).
func callDIE(e *dwarf.Entry) (callee dwarf.Offset, tail, ok bool) {
	t, _ := e.Val(attrCallTailCall).(bool)
	gnu, _ := e.Val(attrGNUTailCall).(bool)
	for _, a := range []dwarf.Attr{attrCallOrigin, dwarf.AttrAbstractOrigin} {
		if off, ok := e.Val(a).(dwarf.Offset); ok {
			return off, t || gnu, true
		}
	}
	return 0, t || gnu, t || gnu
}

// newScope makes the scope of a subprogram or inlined subroutine DIE, and
// adds it to outer's; nil when it has no code.
func (x *dwarfIndex) newScope(e *dwarf.Entry, outer *scope) *scope {
	rs, err := x.d.Ranges(e)
	if err != nil || len(rs) == 0 {
		return nil
	}
	s := &scope{ranges: rs, die: e.Offset, callFile: -1}
	if f, ok := e.Val(dwarf.AttrCallFile).(int64); ok {
		s.callFile = int(f)
	}
	if l, ok := e.Val(dwarf.AttrCallLine).(int64); ok {
		s.callLine = int(l)
	}
	if c, ok := e.Val(dwarf.AttrCallColumn).(int64); ok {
		s.callCol = int(c)
	}
	if outer != nil {
		outer.inlined = append(outer.inlined, s)
	}
	return s
}

// lowPC is the start of the code of the DIE at off, if it has code.
func (x *dwarfIndex) lowPC(off dwarf.Offset) (uint64, bool) {
	r := x.d.Reader()
	r.Seek(off)
	e, err := r.Next()
	if err != nil || e == nil {
		return 0, false
	}
	lo, ok := e.Val(dwarf.AttrLowpc).(uint64)
	return lo, ok
}

// attrLinkageNameMIPS is DW_AT_MIPS_linkage_name, the linkage name of
// DWARF before version 4.
const attrLinkageNameMIPS dwarf.Attr = 0x2007

// dieName is the (mangled when it has one) name of the function the DIE
// at off is an instance of: its own DW_AT_linkage_name or DW_AT_name, or
// its abstract origin's or specification's, followed a few levels. ""
// when none is found.
func (x *dwarfIndex) dieName(off dwarf.Offset) string {
	if n, ok := x.names[off]; ok {
		return n
	}
	name := ""
	r := x.d.Reader()
	at := off
	for range 8 {
		r.Seek(at)
		e, err := r.Next()
		if err != nil || e == nil {
			break
		}
		if n, ok := e.Val(dwarf.AttrLinkageName).(string); ok {
			name = n
			break
		}
		if n, ok := e.Val(attrLinkageNameMIPS).(string); ok {
			name = n
			break
		}
		if n, ok := e.Val(dwarf.AttrName).(string); ok && name == "" {
			name = n // a specification may still have the linkage name
		}
		next, ok := e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset)
		if !ok {
			if next, ok = e.Val(dwarf.AttrSpecification).(dwarf.Offset); !ok {
				break
			}
		}
		at = next
	}
	x.names[off] = name
	return name
}
