package shadow

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Byte precision on 4-byte granules.
//
// A granule's cell records which of its 4 bytes have been accessed since the
// cell was last reset (the touched mask, bits 52-55 of word 2, inside the
// flags byte). While every access overlaps the bytes touched before, the
// granule is one location: accesses to overlapping bytes are the ones that
// can race. When an access touches only bytes nobody touched before (a
// thread writing a[1] next to another thread's a[0]), the runtime splits the
// granule: word 0 gets the state StateSplit and word 1 the address of four
// side cells, one per byte. Each touched byte's side cell starts as a copy of
// the granule's cell (its history is the granule's), each untouched byte's
// as a never-accessed cell, and from then on every byte is its own location.
// Splitting never loses a race: a byte's side cell knows at least what the
// granule knew.
//
// Side cells come from an arena outside the Go heap, 96 bytes per split
// granule. They are not reclaimed when a granule is reset (Reset and the
// runtime's C reset zero word 1 and forget the pointer): a program that keeps
// reallocating memory where neighbouring bytes are written by different
// threads leaks 96 bytes per such granule and reset (MemStats.SplitBytes).
const (
	// StateSplit in the top 4 bits of word 0 marks a split granule. It is
	// outside the range of msm.State.
	StateSplit = 15
	// TouchedShift locates the 4-bit touched mask in word 2.
	TouchedShift = 52
	// TouchedMask is the touched mask in word 2, in place.
	TouchedMask = uint64(0xf) << TouchedShift
)

// SideCells are the per-byte cells of a split granule.
type SideCells [GranuleSize][CellWords]uint64

// splitArena hands out side cells from mmap'd slabs that are never freed.
type splitArena struct {
	mu    sync.Mutex
	slab  unsafe.Pointer
	used  uintptr
	total uintptr
}

const splitSlab = 1 << 20

func (a *splitArena) alloc() *SideCells {
	const size = unsafe.Sizeof(SideCells{})
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.slab == nil || a.used+size > splitSlab {
		p, err := unix.MmapPtr(-1, 0, nil, splitSlab, mmapProt, mmapFlags)
		if err != nil {
			return nil
		}
		a.slab, a.used = p, 0
	}
	s := (*SideCells)(unsafe.Add(a.slab, a.used))
	a.used += size
	a.total += size
	return s
}

// Split turns cell c (locked by the caller, not split, not New) into a split
// granule and returns its side cells, or nil when no memory is left (the
// granule then stays one location). touched is the cell's touched mask.
func (m *Memory) Split(c *[3]uint64) *SideCells {
	s := m.split.alloc()
	if s == nil {
		return nil
	}
	touched := (c[2] & TouchedMask) >> TouchedShift
	for b := range s {
		if touched&(1<<b) != 0 {
			s[b] = *c
		}
	}
	c[1] = uint64(uintptr(unsafe.Pointer(s)))
	// Word 0 last, in one store: the fast path reads it without the lock.
	atomic.StoreUint64(&c[0], StateSplit<<60)
	return s
}

// Side returns the side cells of a split cell.
func Side(c *[3]uint64) *SideCells {
	return (*SideCells)(unsafe.Pointer(uintptr(c[1])))
}

// IsSplit reports whether cell c is a split granule.
func IsSplit(c *[3]uint64) bool { return c[0]>>60 == StateSplit }

// ByteMask returns the bits of granule g (granule-aligned) that the access
// [addr, end) covers.
func ByteMask(addr, end, g uint64) uint64 {
	lo, hi := max(addr, g), min(end, g+GranuleSize)
	if hi <= lo {
		return 0
	}
	return (1<<(hi-lo) - 1) << (lo - g)
}

func (m *Memory) splitBytes() int64 {
	m.split.mu.Lock()
	defer m.split.mu.Unlock()
	return int64(m.split.total)
}
