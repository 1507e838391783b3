package detect

import (
	"slices"

	"hgrewrite/abi"
	"hgrewrite/shadow"
)

// The callers of a report's previous access. That access was checked
// long before the report, and its thread has moved on; ThreadSanitizer
// replays a per-thread trace of function entries and exits to find the
// stack it had. The rewriter traces entries only (abi, "The call trace"):
// each program function's entry records its stack pointer, its start and
// its return address, and a frame has returned once a later entry is at
// or above its stack pointer (a call from a frame further out, or a tail
// call that replaced it). Replaying a thread's trace this way gives its
// stack after each entry.
//
// The trace does not say where the access was made among the entries:
// the history word has no room for a position. So every activation of
// the access's function in the trace is a candidate, each with the
// callers it had; where the cell knows the segment of the access
// (prevClock), only the activations that were live in that segment are,
// and none when that segment is older than the trace. When all
// candidates agree on the callers, those are the access's; otherwise
// (the function is called from several places, or recursively) none are
// shown. Where the segment is not known and the trace has wrapped, the
// access may be older than every candidate, and the callers shown those
// of the function's later calls (a function called from one place and
// then only from another, without touching the location again). The
// trace keeps the last 4,096 entries of a thread: the callers of an
// access older than that are lost, as ThreadSanitizer's are past its
// history size.

// traceCall is one function entry of a call trace.
type traceCall struct {
	sp uint32 // the low 32 bits of rsp at the entry: a thread's stack spans far less than 2 GB
	fn uint32 // the function's link-time start
	ra uint64 // the return address, at run time
	// the functions that handed their frame to this one by tail calls,
	// innermost first (an entry with the stack pointer and return address
	// of the frame it replaced), up to tailDepth of them
	tails [tailDepth]uint32
}

// above says whether a frame entered with stack pointer sp is still live
// when a function is entered with stack pointer later: it lies above it
// on the stack (in 32-bit wrap-around arithmetic).
func above(sp, later uint32) bool { return int32(sp-later) > 0 }

// candidates are the activations of the function starting at fn that
// thread tid's trace words hold for an access made in the segment with
// clock count clock (0: not known), each with its callers (traceCallers):
// those of that segment when the trace marks it; none when the segment
// is older than the trace; all of them when the segment is not known, or
// the trace holds all of the thread's entries but no mark of it.
func candidates(words []uint64, tid uint16, fn uint32, clock uint64, tail tailCalls) [][]traceCall {
	if clock != 0 {
		chains, marked, whole := traceCallers(words, tid, fn, clock, tail)
		if marked || !whole {
			return chains
		}
	}
	chains, _, _ := traceCallers(words, tid, fn, 0, tail)
	return chains
}

// tailCalls says whether entry to, with the stack pointer and return
// address of the frame from it replaces, was reached by tail calls from
// from, rather than by a new call from the same call site after from
// returned (a loop): only the debug information tells them apart.
type tailCalls func(from, to traceCall) bool

// traceCallers replays the trace words (oldest entry first; those of one
// thread tid) and returns the callers of the activations of the function
// starting at fn: for each activation, its entry followed by those of
// its callers, innermost first. With clock nonzero, only activations live
// in the segment with that clock count, and none at all when the trace
// does not mark that segment (marked says whether it does). whole says
// the trace holds the thread's entries since it started (the mark of its
// start is still there).
func traceCallers(words []uint64, tid uint16, fn uint32, clock uint64, tail tailCalls) (chains [][]traceCall, marked, whole bool) {
	start := 0
	for i := 0; i+1 < len(words); i += 2 {
		if uint32(words[i]>>32) == abi.TraceMarkReset {
			start = i + 2 // the trace before it was another thread's
		}
	}
	whole = start > 0
	var stack []traceCall
	in := clock == 0
	add := func(k int) { // the activation stack[k] and its callers
		chain := slices.Clone(stack[:k+1])
		slices.Reverse(chain)
		chains = append(chains, chain)
	}
	for i := start; i+1 < len(words); i += 2 {
		w0, w1 := words[i], words[i+1]
		switch hi := uint32(w0 >> 32); {
		case w0 == 0 && w1 == 0:
			continue // never written
		case hi == abi.TraceMarkEpoch:
			if clock == 0 || shadow.CellEpochTID(w1) != tid {
				continue
			}
			if in = w1&shadow.CellClockMask == clock; in {
				marked = true
				for k := range stack {
					if stack[k].fn == fn {
						add(k) // live as the segment began
					}
				}
			}
		default:
			c := traceCall{sp: uint32(w0), fn: hi, ra: w1}
			for len(stack) > 0 && !above(stack[len(stack)-1].sp, c.sp) {
				if p := stack[len(stack)-1]; p.sp == c.sp && p.ra == c.ra && tail(p, c) {
					c.tails = tailedFrom(p) // p jumped to c
				}
				stack = stack[:len(stack)-1]
			}
			stack = append(stack, c)
			if in && c.fn == fn {
				add(len(stack) - 1)
			}
		}
	}
	return chains, marked, whole
}

// tailCalls is tailCalls from the program's DWARF call sites: from's
// function tail-calls to's; or the call both returned to calls from's
// function, not to's, which from's function then reached by jumps
// (an indirect tail call, or through a function not traced).
func (r *reporter) tailCalls(from, to traceCall) bool {
	if from.fn == to.fn {
		return false // a loop (GCC makes self tail calls loops)
	}
	for _, c := range r.sym.tailCallees(uint64(from.fn)) {
		if c.start == uint64(to.fn) {
			return true
		}
	}
	lp := r.d.host.LinkPC(from.ra)
	if lp == 0 {
		return false
	}
	callee, ok := r.sym.callee(lp)
	return ok && callee == uint64(from.fn)
}

// tailedFrom is the tail callers of the function p tail-called: p's
// function, then p's own tail callers.
func tailedFrom(p traceCall) [tailDepth]uint32 {
	var t [tailDepth]uint32
	t[0] = p.fn
	copy(t[1:], p.tails[:])
	return t
}

// previousCallers returns the frames of the callers of thread tid's
// access at link-time pc, made in the segment with clock count clock (0
// when not known), from the thread's call trace; nil when they cannot be
// told (no trace, no activation of the function in it, or activations
// with different callers).
func (r *reporter) previousCallers(tid int32, pc uint32, clock uint64) []Frame {
	fn, words, ok := r.traceOf(tid, pc)
	if !ok {
		return nil
	}
	chain, ok := r.agreed(candidates(words, uint16(tid), fn, clock, r.tailCalls))
	if !ok {
		return nil
	}
	return r.chainFrames(chain)
}

// traceOf returns the start of the function holding link-time pc and
// thread tid's call trace; false when either is not known.
func (r *reporter) traceOf(tid int32, pc uint32) (uint32, []uint64, bool) {
	fn, ok := r.sym.function(uint64(pc))
	if !ok || fn >= 1<<32 {
		return 0, nil, false
	}
	words := r.d.host.CallTrace(tid)
	return uint32(fn), words, len(words) > 0
}

// currentCallers returns the frames of the callers of t's access at
// link-time pc, made in t's current segment with the stack pointer the
// event gave (t.accessSP), from t's own call trace: the activations of the
// access's function whose frame holds that stack pointer. nil when they
// cannot be told.
func (r *reporter) currentCallers(t *thread, pc uint32) []Frame {
	if t.accessSP == 0 {
		return nil
	}
	fn, words, ok := r.traceOf(t.tid, pc)
	if !ok {
		return nil
	}
	sp := uint32(t.accessSP)
	holding := func(chains [][]traceCall) [][]traceCall {
		var out [][]traceCall
		for _, c := range chains {
			// the entry's stack pointer is at or above the access's
			// (which the event gives up to 8 bytes high), within a frame
			if d := c[0].sp + 8 - sp; int32(d) >= 0 && d < maxFrame {
				out = append(out, c)
			}
		}
		return out
	}
	chain, ok := r.agreed(holding(candidates(words, uint16(t.tid), fn, uint64(t.epoch())&shadow.CellClockMask, r.tailCalls)))
	if !ok {
		return nil
	}
	return r.chainFrames(chain)
}

// maxFrame bounds how far below a function's entry its frame's accesses
// are taken to be.
const maxFrame = 1 << 20

// agreed checks each candidate chain (verified) and returns the one they
// all are, or false when there is none or they differ.
func (r *reporter) agreed(chains [][]traceCall) ([]traceCall, bool) {
	var first []traceCall
	for i, c := range chains {
		c = r.verified(c)
		if i == 0 {
			first = c
		} else if !slices.Equal(c, first) {
			return nil, false
		}
	}
	return first, len(chains) > 0
}

// verified drops from a chain (an activation, then its callers) the
// callers that had returned although no later entry was above them: a
// frame whose caller pushed arguments before its next call, entered below
// an older frame's stack pointer. A caller is kept when the return
// address of the call it made lies in its function, or in a library
// (whose own frames the trace does not see). An entry whose return
// address is no code at all was not entered by a call (a part of a
// function the compiler moved away and jumps to, an exception's landing
// pad): the chain ends there, its return address cleared.
func (r *reporter) verified(chain []traceCall) []traceCall {
	out := slices.Clone(chain[:1])
	for _, c := range chain[1:] {
		ra := out[len(out)-1].ra
		if r.noCode(ra) {
			break
		}
		if lp := r.d.host.LinkPC(ra); lp == 0 || r.callerOf(lp-1, c.fn) {
			out = append(out, c)
		}
	}
	if last := &out[len(out)-1]; r.noCode(last.ra) {
		last.ra = 0
	}
	return out
}

// callerOf says whether link-time pc is code of the function starting at
// fn: its body, or its cold part ("f.cold", "f [clone .cold]"), which the
// trace does not see entered (patch: the compiler jumps there).
func (r *reporter) callerOf(pc uint64, fn uint32) bool {
	start, ok := r.sym.function(pc)
	if !ok || start == uint64(fn) {
		return ok
	}
	at := r.sym.frames(pc)
	name := at[len(at)-1].Func
	base := r.functionFrame(fn).Func
	return base != "" && (name == base+".cold" || name == base+" [clone .cold]")
}

// noCode says whether ra is no code a call could return to: not the
// program's, the runtime's or a library's.
func (r *reporter) noCode(ra uint64) bool {
	return r.d.host.LinkPC(ra) == 0 && !r.d.host.InRuntime(ra) && !r.sym.inFile(ra)
}

// chainFrames symbolises the callers of a verified chain: each entry's
// return address is a frame in the next entry's function (the innermost
// one in the access's caller). Where a return address is a library's,
// the calls inside the library are not traced: the next function shows
// without a line, as the caller whose call into the library was not seen.
func (r *reporter) chainFrames(chain []traceCall) []Frame {
	var out []Frame
	for i, c := range chain {
		if i > 0 && r.d.host.LinkPC(chain[i-1].ra) == 0 {
			out = append(out, r.functionFrame(c.fn))
		}
		callee := c.fn
		for _, t := range c.tails {
			if t == 0 {
				break
			}
			out = append(out, r.tailFrames(t, callee)...)
			callee = t
		}
		if c.ra == 0 {
			break // not entered by a call (verified)
		}
		fr := r.framesFrom([]uint64{c.ra}, true)
		if len(fr) == 0 {
			break // the runtime's thread start, or the C library's below main
		}
		out = append(out, fr...)
		if fr[len(fr)-1].Func == "main" {
			break
		}
	}
	return out
}

// tailFrames are the frames of the function starting at fn where it
// tail-called the one starting at callee: the jump's line where the DWARF
// call sites give it (a direct jump to callee, or the function's only
// indirect one), else the function without a line.
func (r *reporter) tailFrames(fn, callee uint32) []Frame {
	var indirect []uint64
	for _, c := range r.sym.tailCallees(uint64(fn)) {
		switch {
		case c.after == 0:
		case c.start == uint64(callee):
			return r.sym.frames(c.after - 1)
		case c.start == 0 && c.name == "":
			indirect = append(indirect, c.after)
		}
	}
	if len(indirect) == 1 {
		return r.sym.frames(indirect[0] - 1)
	}
	return []Frame{r.functionFrame(fn)}
}

// functionFrame is the frame of the function starting at fn (link time)
// where the call it made is not known: its name and file, no line.
func (r *reporter) functionFrame(fn uint32) Frame {
	fr := r.sym.frames(uint64(fn))
	f := fr[len(fr)-1]
	f.Line, f.Column, f.Inlined = 0, 0, false
	return f
}
