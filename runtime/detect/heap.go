package detect

import (
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"

	"hgrewrite/abi"
)

// freeCheckBytes bounds the part of a released block that is checked as a
// write: freeing a large block would otherwise cost time in its size.
const freeCheckBytes = 4096

// Free handles a free (or delete, or realloc's release) that the program
// called on thread tid: the release is a write to the block (checked on
// its first freeCheckBytes; pc is the link-time address inside the call:
// hg_call_pc in runtime/ranges.c), then the block's shadow is reset and
// the block forgotten. It returns the number of the thread's reports
// waiting for its call stack, as Flush does; the caller has flushed the
// thread's events before.
func (d *Detector) Free(tid int32, addr, size, pc uint64) int {
	t := d.live(tid)
	if t == nil {
		return 0
	}
	if t.cond.recording {
		d.handoffWrite(t, addr, min(size, freeCheckBytes))
	}
	t.accessSP = 0 // a wrapper's check: no stack pointer of the program's (reportstack.go)
	d.access(t, addr, min(size, freeCheckBytes), uint32(pc), abi.Write|accessFree)
	d.mem.Reset(addr, size)
	d.heap.remove(addr)
	d.mutexGone(addr, size)
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
		d.mutexGone(addr, size)
	}
}

// heapBlocks remembers live heap blocks and where they were allocated, so
// that a report can say "heap block of N bytes allocated at f file:line".
// Programs keep hundreds of thousands of small blocks alive (a hash
// table's nodes): the records live outside the Go heap, in an
// open-addressing table of 16-byte slots mapped with mmap, where a Go map
// took about 90 bytes a block and the collector's headroom half as much
// again (bench/locks.c: 3.7 of the detector's 8 MB in use). Allocation
// sites are few, so a record names its site by index (sites); with the
// site's pc in it, a slot took 24 bytes, and bench/locks.c's 40 thousand
// nodes 1.5 MB.
type heapBlocks struct {
	mu     sync.Mutex
	slots  []heapSlot // a power of two of them; nil until the first add
	mem    []byte     // their mapping, nil when they are in the Go heap
	used   int        // slots not empty: live records and deleted ones
	live   int
	sites  []uint64          // allocation sites' pcs by index; 0 is an unknown site (pc 0)
	siteOf map[uint64]uint64 // pc -> its index in sites
}

// heapSlot is one record: addr 0 is an empty slot, heapGone a deleted
// one (probes go on past it). Block addresses are never either.
type heapSlot struct {
	addrTID  uint64 // addr | tid << heapTIDShift (addresses are below 2^47; tids fit 16 bits)
	sizeSite uint64 // size (up to heapMaxSize) | site << heapSiteShift
}

const (
	heapGone      = 1
	heapTIDShift  = 48
	heapAddrMask  = 1<<heapTIDShift - 1
	heapSiteShift = 40
	heapMaxSize   = 1<<heapSiteShift - 1 // a larger block's reports say this size
	heapMaxSites  = 1 << (64 - heapSiteShift)
	heapMinSlots  = 1024
)

type heapBlock struct {
	size uint64
	pc   uint64 // link-time pc inside the allocation call (its return address - 1: runtime/ranges.c, hg_call_pc)
	tid  int32
}

// addr is the slot's block address (or 0, or heapGone).
func (s heapSlot) addr() uint64 { return s.addrTID & heapAddrMask }

// site is pc's index in h.sites, added if new (under h.mu); past
// heapMaxSites sites, new ones are unknown.
func (h *heapBlocks) site(pc uint64) uint64 {
	if i, ok := h.siteOf[pc]; ok {
		return i
	}
	if h.siteOf == nil {
		h.siteOf, h.sites = map[uint64]uint64{0: 0}, []uint64{0}
		if pc == 0 {
			return 0
		}
	}
	if len(h.sites) >= heapMaxSites {
		return 0
	}
	h.siteOf[pc] = uint64(len(h.sites))
	h.sites = append(h.sites, pc)
	return uint64(len(h.sites) - 1)
}

func (h *heapBlocks) add(addr, size, pc uint64, tid int32) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if (h.used+1)*4 > len(h.slots)*3 {
		h.rehash()
	}
	rec := heapSlot{addr | uint64(uint16(tid))<<heapTIDShift, min(size, heapMaxSize) | h.site(pc)<<heapSiteShift}
	free := -1
	for i := h.home(addr); ; i = (i + 1) & (len(h.slots) - 1) {
		switch h.slots[i].addr() {
		case addr:
			h.slots[i] = rec
			return
		case heapGone:
			if free < 0 {
				free = i
			}
			continue
		case 0:
			if free < 0 {
				free = i
				h.used++
			}
			h.slots[free] = rec
			h.live++
			return
		}
	}
}

func (h *heapBlocks) remove(addr uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.slots == nil {
		return
	}
	for i := h.home(addr); h.slots[i].addr() != 0; i = (i + 1) & (len(h.slots) - 1) {
		if h.slots[i].addr() == addr {
			h.slots[i] = heapSlot{addrTID: heapGone}
			h.live--
			return
		}
	}
}

// home is the slot where addr's probe starts.
func (h *heapBlocks) home(addr uint64) int {
	return int((addr >> 4 * 0x9e3779b97f4a7c15) >> 32 & uint64(len(h.slots)-1))
}

// rehash moves the live records into a table of twice as many slots as
// they need (deleted ones are dropped), at least heapMinSlots.
func (h *heapBlocks) rehash() {
	n := heapMinSlots
	for n < 2*(h.live+1) {
		n *= 2
	}
	old, oldMem := h.slots, h.mem
	h.slots, h.mem = heapTable(n)
	h.used, h.live = 0, 0
	for _, s := range old {
		if s.addr() > heapGone {
			i := h.home(s.addr())
			for h.slots[i].addr() != 0 {
				i = (i + 1) & (n - 1)
			}
			h.slots[i] = s
			h.used++
			h.live++
		}
	}
	if oldMem != nil {
		unix.Munmap(oldMem)
	}
}

// heapTable is n empty slots outside the Go heap, or in it when the
// kernel refuses the mapping (mem nil).
func heapTable(n int) ([]heapSlot, []byte) {
	size := n * int(unsafe.Sizeof(heapSlot{}))
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return make([]heapSlot, n), nil
	}
	return unsafe.Slice((*heapSlot)(unsafe.Pointer(unsafe.SliceData(mem))), n), mem
}

// find returns the live block containing addr. It reads every slot: it
// runs for reports only.
func (h *heapBlocks) find(addr uint64) (uint64, heapBlock, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range h.slots {
		start, size := s.addr(), s.sizeSite&heapMaxSize
		if start > heapGone && addr >= start && addr-start < size {
			return start, heapBlock{size, h.sites[s.sizeSite>>heapSiteShift], int32(s.addrTID >> heapTIDShift)}, true
		}
	}
	return 0, heapBlock{}, false
}
