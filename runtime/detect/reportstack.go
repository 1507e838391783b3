package detect

import "hgrewrite/abi"

// CallStack is a thread's call stack as the C side captures it at an
// interposed call: return addresses, innermost first, and for each frame
// the stack pointer it had at the call it is making (libgcc's unwinder
// reports, with each frame, the CFA of the frame it called), or no stack
// pointers where they are not known.
type CallStack struct {
	RA []uint64
	SP []uint64 // nil, or one per RA
}

// StackOfPairs makes a CallStack of (return address, stack pointer)
// pairs, as the C side passes them (runtime/threads.c hg_stack_now).
func StackOfPairs(words []uint64) CallStack {
	s := CallStack{RA: make([]uint64, len(words)/2), SP: make([]uint64, len(words)/2)}
	for i := range s.RA {
		s.RA[i], s.SP[i] = words[2*i], words[2*i+1]
	}
	return s
}

// Accesses are checked in batches, so a report's stack is captured after
// the access, at the thread's next interposed call: by then the thread may
// have called further or returned. The access's own callers are still on
// that stack when the function that made the access has not returned:
// its frame, which runs from its stack pointer up to its caller's, then
// holds the stack pointer the access was made with. The event carries
// that stack pointer, known to within 8 bytes (sp or sp-8: the trampoline
// may or may not have saved the flags, abi.EventLenSP). accessCallers
// looks at the frames that may hold it (their stack pointer at or below
// sp, their caller's above sp-8: one or two frames) and takes the first
// that is the access's function, or one the access's function tail-calls
// (its DWARF call sites say so, through up to tailDepth calls; the
// callee then runs in the caller's frame, common at -O2). It returns the index of that frame's caller, or
// -1 when the function returned meanwhile, the stack pointer is not
// known, or no frame matches.
func (r *reporter) accessCallers(stack CallStack, sp uint64, pc uint32) int {
	if sp == 0 || len(stack.SP) != len(stack.RA) {
		return -1
	}
	fn, ok := r.sym.function(uint64(pc))
	if !ok {
		return -1
	}
	for i := range stack.RA {
		if i+1 < len(stack.SP) && stack.SP[i+1] <= sp-8 {
			continue // a frame called after the access (or the runtime's own)
		}
		if stack.SP[i] > sp {
			return -1 // above the access: no frame held it
		}
		if r.frameOf(stack.RA[i], uint64(pc), fn) {
			return i + 1
		}
	}
	return -1
}

// tailDepth bounds the chains of tail calls accessCallers follows (a
// small function that ends by calling one that ends by unlocking).
const tailDepth = 3

// frameOf says whether the frame whose return address is ra is the
// activation of the function starting at fn that made the access at pc,
// or of a function that took its frame over by tail calls: a function
// of the program, or a library's or the runtime's (an interposed call
// the program made last, named by its symbol).
func (r *reporter) frameOf(ra, pc, fn uint64) bool {
	if lp := r.d.host.LinkPC(ra); lp != 0 {
		frame, ok := r.sym.function(lp - 1)
		return ok && (frame == fn || r.sym.tailReaches(pc, frame, "", tailDepth))
	}
	lib := r.sym.libFrames(ra - 1)
	name := lib[len(lib)-1].Func
	return name != "" && r.sym.tailReaches(pc, 0, name, tailDepth)
}

// eventSP splits an access event's len word: the range length (0 for a
// plain access) and the stack pointer the fast path gave it (0 if none).
func eventSP(length uint64) (n, sp uint64) {
	if length&abi.EventLenSP != 0 {
		return 0, length &^ abi.EventLenSP
	}
	return length, 0
}
