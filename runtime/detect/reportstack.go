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
// holds the stack pointer the access was made with (the event carries
// it, at most 8 bytes high: abi.EventLenSP). accessCallers finds that
// frame (the innermost whose caller's stack pointer is above the
// access's; a function that calls has at least 16 bytes of frame above
// its own stack pointer, so the estimate does not step past it) and, when
// its function is the access's, returns the index of its caller's frame;
// -1 when the function returned meanwhile, the stack pointer is not
// known, or the frames do not match.
func (r *reporter) accessCallers(stack CallStack, sp uint64, pc uint32) int {
	if sp == 0 || len(stack.SP) != len(stack.RA) {
		return -1
	}
	fn, ok := r.sym.function(uint64(pc))
	if !ok {
		return -1
	}
	for i := range stack.RA {
		if i+1 < len(stack.SP) && stack.SP[i+1] <= sp {
			continue // a frame called after the access (or the runtime's own)
		}
		lp := r.d.host.LinkPC(stack.RA[i])
		if lp == 0 {
			return -1
		}
		if caller, ok := r.sym.function(lp - 1); !ok || caller != fn {
			return -1
		}
		return i + 1
	}
	return -1
}

// eventSP splits an access event's len word: the range length (0 for a
// plain access) and the stack pointer the fast path gave it (0 if none).
func eventSP(length uint64) (n, sp uint64) {
	if length&abi.EventLenSP != 0 {
		return 0, length &^ abi.EventLenSP
	}
	return length, 0
}
