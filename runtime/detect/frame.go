package detect

// Frame is one symbolised code location of a report: a frame of a call
// stack, or one of the functions inlined at it. Every renderer of reports
// (text, JSON, SARIF) and the suppressions read frames, never raw
// addresses.
type Frame struct {
	PC      uint64 // run-time address: the access, or a call's return address moved back into the call
	Func    string // demangled function name, "" when unknown
	File    string // source file as the debug information names it (a full path when it has one), "" when unknown
	Line    int    // 0 when unknown
	Column  int    // 0 when unknown
	Module  string // base name of the ELF file the code is in ("prog.hg", "libc.so.6"), "" when unknown
	Offset  uint64 // the address within Module (its link-time address)
	Inlined bool   // the code of Func is inlined here into the frame that follows
}
