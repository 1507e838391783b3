package detect

import (
	"fmt"
	"path/filepath"
	"strings"
)

// The kinds of report.
const (
	kindRace      = "data race"
	kindLockOrder = "lock-order inversion (potential deadlock)"
)

// raceReport is one report as data. The text (text), JSON and SARIF
// renderers (reportfiles.go) and the suppressions (suppress.go) read it;
// nothing else decides what a report says.
type raceReport struct {
	Kind     string
	Pid      int
	Addr     uint64
	Accesses []reportAccess // the current access, then the previous one when known
	Location reportLocation
	Locks    []reportLock     // held by the current access's thread, guarding it
	Threads  []reportThread   // the threads the accesses name
	Verdict  string           // which state machine found it, in which state
	Later    []Frame          // the current thread's stack at its next interposed call, nil when unknown
	Cycle    []reportEdge     // a lock-order inversion's edges, in the cycle's order
	Mutexes  []reportLocation // where each mutex of the cycle lives, in its order

	// the current access's code location and stack pointer, to find its
	// callers on the stack captured later (reportstack.go)
	pc uint32
	sp uint64
	// its callers as the thread's call trace tells them (calltrace.go),
	// for when the stack captured later no longer holds its frame
	traced []Frame
}

// reportEdge is an edge of the lock-order graph: thread TID took To while
// it held From, with the stack Stack.
type reportEdge struct {
	From, To reportLock
	TID      int32
	Stack    []Frame
}

type reportAccess struct {
	Kind  string // "read", "write", "read-write" or "free"
	Size  uint64
	TID   int32
	Stack []Frame
}

type reportLocation struct {
	Kind         string // "global", "heap", "section" (the program's data no symbol names) or "other"
	Addr         uint64 // the accessed address; the block's start for "heap"
	Name         string // the global's, or the section's
	Offset       uint64 // of the accessed address in the global, block or section
	Size         uint64 // of the global or block
	Module       string // the global's file
	ModuleOffset uint64 // the global's link-time address
	AllocTID     int32  // the heap block's allocating thread
	Alloc        []Frame
	Stripped     bool // "section": the program names none of its variables
}

type reportLock struct {
	Addr uint64
	Name string // the global's name, "" for others
}

type reportThread struct {
	TID     int32
	Name    string
	Main    bool
	Parent  int32   // -1 when unknown
	Created []Frame // the creator's stack at pthread_create
	Earlier int     // threads that had the id before
	Past    []reportThread
}

// text is the report as printed: close to ThreadSanitizer's layout, so
// that people and tools that read those read ours.
func (rep *raceReport) text() string {
	var b strings.Builder
	if rep.Kind == kindLockOrder {
		b.WriteString(rep.lockOrderText())
		for _, t := range rep.Threads {
			t.text(&b)
		}
		b.WriteString("==================\n")
		return b.String()
	}
	fmt.Fprintf(&b, "==================\nWARNING: hgrewrite: %s (pid %d)\n", rep.Kind, rep.Pid)
	for i, a := range rep.Accesses {
		if i == 0 {
			fmt.Fprintf(&b, "  %s of size %d at %#x by thread T%d:\n", capitalize(a.Kind), a.Size, rep.Addr, a.TID)
		} else {
			fmt.Fprintf(&b, "  Previous %s of size %d by thread T%d:\n", a.Kind, a.Size, a.TID)
		}
		writeFrames(&b, a.Stack)
	}
	b.WriteString(rep.Location.text())
	if len(rep.Accesses) > 0 {
		fmt.Fprintf(&b, "  Locks held by T%d: %s\n", rep.Accesses[0].TID, locksText(rep.Locks))
	}
	for _, t := range rep.Threads {
		t.text(&b)
	}
	fmt.Fprintf(&b, "  %s\n", rep.Verdict)
	if len(rep.Later) > 0 && len(rep.Accesses) > 0 {
		fmt.Fprintf(&b, "  Stack of T%d at its next synchronisation or library call after the access:\n", rep.Accesses[0].TID)
		writeFrames(&b, rep.Later)
	}
	b.WriteString("==================\n")
	return b.String()
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// writeFrames prints a stack, one line per frame, numbered from 0.
func writeFrames(b *strings.Builder, frames []Frame) {
	for i, f := range frames {
		fmt.Fprintf(b, "    #%d %s\n", i, f.text())
	}
}

// text is one frame: "func file.c:12 (prog+0x1234)", with what is known.
func (f Frame) text() string {
	var parts []string
	if f.Func != "" {
		parts = append(parts, f.Func)
	}
	if f.File != "" && f.Line > 0 {
		parts = append(parts, fmt.Sprintf("%s:%d", filepath.Base(f.File), f.Line))
	}
	if len(parts) == 0 {
		parts = append(parts, fmt.Sprintf("%#x", f.PC))
	}
	if f.Module != "" {
		parts = append(parts, fmt.Sprintf("(%s+%#x)", f.Module, f.Offset))
	}
	return strings.Join(parts, " ")
}

func (l reportLocation) text() string {
	switch l.Kind {
	case "global":
		if l.Offset != 0 {
			return fmt.Sprintf("  Location is global '%s' at offset %d (of size %d) at %#x (%s+%#x)\n",
				l.Name, l.Offset, l.Size, l.Addr, l.Module, l.ModuleOffset)
		}
		return fmt.Sprintf("  Location is global '%s' of size %d at %#x (%s+%#x)\n", l.Name, l.Size, l.Addr, l.Module, l.ModuleOffset)
	case "heap":
		var b strings.Builder
		fmt.Fprintf(&b, "  Location is heap block of size %d at %#x (offset %d), allocated by thread T%d at:\n",
			l.Size, l.Addr, l.Offset, l.AllocTID)
		if len(l.Alloc) == 0 {
			b.WriteString("    #0 an unknown site\n")
		}
		writeFrames(&b, l.Alloc)
		return b.String()
	case "section":
		why := "no symbol names a variable there"
		if l.Stripped {
			why = "the program is stripped, and its debug symbols (a -dbgsym package, or the file its .gnu_debuglink names) would name the variable"
		}
		return fmt.Sprintf("  Location is in %s of %s, at offset %#x, at %#x (%s+%#x): %s.\n",
			l.Name, l.Module, l.Offset, l.Addr, l.Module, l.ModuleOffset, why)
	}
	return fmt.Sprintf("  Location at %#x is not a global variable or live heap block of %s (stack or a library's memory).\n", l.Addr, l.Module)
}

// label names a mutex: "'name' (0x...)" for a global, else its address.
func (l reportLock) label() string {
	if l.Name != "" {
		return fmt.Sprintf("'%s' (%#x)", l.Name, l.Addr)
	}
	return fmt.Sprintf("%#x", l.Addr)
}

// mutexText describes where mutex Mn lives, as text describes a racy
// location: "  Mutex M1 is global 'a' of size 40 at ...".
func (l reportLocation) mutexText(n int) string {
	loc := l.text()
	if rest, ok := strings.CutPrefix(loc, "  Location "); ok {
		return fmt.Sprintf("  Mutex M%d %s", n, rest)
	}
	return fmt.Sprintf("  Mutex M%d:\n%s", n, loc)
}

func locksText(locks []reportLock) string {
	if len(locks) == 0 {
		return "none"
	}
	var names []string
	for _, l := range locks {
		if l.Name != "" {
			names = append(names, fmt.Sprintf("%s (%#x)", l.Name, l.Addr))
		} else {
			names = append(names, fmt.Sprintf("%#x", l.Addr))
		}
	}
	return strings.Join(names, ", ")
}

// label is "T3" or "T3 'name'".
func (t reportThread) label() string {
	if t.Name != "" {
		return fmt.Sprintf("T%d '%s'", t.TID, t.Name)
	}
	return fmt.Sprintf("T%d", t.TID)
}

func (t reportThread) text(b *strings.Builder) {
	label := t.label()
	if t.Earlier > 0 && t.Past == nil {
		// a thread a lock-order edge keeps: which of the id's threads
		label += fmt.Sprintf(" (id reused: %d earlier thread(s) had it)", t.Earlier)
	}
	switch {
	case t.Main:
		fmt.Fprintf(b, "  Thread %s is the main thread.\n", label)
	case len(t.Created) > 0:
		fmt.Fprintf(b, "  Thread %s created by T%d at:\n", label, t.Parent)
		writeFrames(b, t.Created)
	case t.Parent >= 0:
		fmt.Fprintf(b, "  Thread %s created by T%d.\n", label, t.Parent)
	}
	if t.Earlier == 0 || t.Past == nil {
		return
	}
	// A previous access by the id may be an earlier thread's: an access
	// records the id, not which of its threads made it.
	fmt.Fprintf(b, "  The id T%d is reused: %d earlier thread(s) had it, each joined before the next started; "+
		"a previous access by T%d may be theirs.\n", t.TID, t.Earlier, t.TID)
	for i, p := range t.Past {
		if len(p.Created) > 0 {
			fmt.Fprintf(b, "  Earlier %s (%d back) created by T%d at:\n", p.label(), i+1, p.Parent)
			writeFrames(b, p.Created)
		} else {
			fmt.Fprintf(b, "  Earlier %s (%d back) created by T%d.\n", p.label(), i+1, p.Parent)
		}
	}
}
