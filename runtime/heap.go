package main

import "sync"

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
