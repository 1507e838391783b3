package detect

import (
	"sync"

	"hgrewrite/abi"
)

// freeCheckBytes bounds the part of a released block that is checked as a
// write: freeing a large block would otherwise cost time in its size.
const freeCheckBytes = 4096

// Free handles a free (or delete, or realloc's release) that the program
// called on thread tid: the release is a write to the block (checked on
// its first freeCheckBytes; pc is the call's link-time address), then the
// block's shadow is reset and the block forgotten. It returns the number
// of the thread's reports waiting for its call stack, as Flush does; the
// caller has flushed the thread's events before.
func (d *Detector) Free(tid int32, addr, size, pc uint64) int {
	t := d.live(tid)
	if t == nil {
		return 0
	}
	if t.cond.recording {
		d.handoffWrite(t, addr, min(size, freeCheckBytes))
	}
	d.access(t, addr, min(size, freeCheckBytes), uint32(pc), abi.Write|accessFree)
	d.mem.Reset(addr, size)
	d.heap.remove(addr)
	return d.rep.pendingCount(t)
}

// heapEvent records an allocation or release for reports. The C side has
// reset the block's shadow already if the event says so (abi.ResetDone:
// runtime/malloc.c resets it at once, since malloc may run where a call
// into Go could deadlock).
func (d *Detector) heapEvent(t *thread, addr, size, pc uint64, flags uint16) {
	if flags&abi.ResetDone == 0 {
		d.mem.Reset(addr, size)
	}
	if flags&abi.Alloc != 0 {
		d.heap.add(addr, size, pc, t.tid)
	} else {
		if t.cond.recording {
			d.handoffWrite(t, addr, min(size, freeCheckBytes)) // a library's release, inside a region
		}
		d.heap.remove(addr)
	}
}

// heapBlocks remembers live heap blocks and where they were allocated, so
// that a report can say "heap block of N bytes allocated at f file:line".
type heapBlocks struct {
	mu     sync.Mutex
	blocks map[uint64]heapBlock
}

type heapBlock struct {
	size uint64
	pc   uint64 // link-time pc of the allocation call's return address
	tid  int32
}

func (h *heapBlocks) add(addr, size, pc uint64, tid int32) {
	h.mu.Lock()
	if h.blocks == nil {
		h.blocks = map[uint64]heapBlock{}
	}
	h.blocks[addr] = heapBlock{size, pc, tid}
	h.mu.Unlock()
}

func (h *heapBlocks) remove(addr uint64) {
	h.mu.Lock()
	delete(h.blocks, addr)
	h.mu.Unlock()
}

// find returns the live block containing addr. It is linear in the number
// of live blocks: it runs for reports only.
func (h *heapBlocks) find(addr uint64) (uint64, heapBlock, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for start, b := range h.blocks {
		if addr >= start && addr < start+b.size {
			return start, b, true
		}
	}
	return 0, heapBlock{}, false
}
