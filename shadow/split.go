package shadow

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"

	"hgrewrite/msm"
)

// Byte precision on 8-byte granules.
//
// A granule's cell records which of its 8 bytes have been accessed since the
// cell was last reset (the touched mask, bits 36-43 of word 0, between the
// thread id and the clock of the epoch, so that the fast path outside Go
// keeps it up to date with the one word it reads and writes anyway). While every access overlaps the bytes touched before, the
// granule is one location: accesses to overlapping bytes are the ones that
// can race. When an access touches only bytes nobody touched before (a
// thread writing a[1] next to another thread's a[0]), the runtime splits the
// granule: word 0 gets the state StateSplit and word 1 the address of eight
// side cells, one per byte. Each touched byte's side cell starts as a copy of
// the granule's cell (its history is the granule's), each untouched byte's
// as a never-accessed cell, and from then on every byte is its own location.
// Splitting never loses a race: a byte's side cell knows at least what the
// granule knew.
//
// Side cells come from a reservation outside the Go heap, 256 bytes per split
// granule. They are not reclaimed when a granule is reset (Reset and the
// runtime's C reset zero word 1 and forget the pointer): a program that keeps
// reallocating memory where neighbouring bytes are written by different
// threads leaks 128 bytes per such granule and reset (MemStats.SplitBytes).
// SideCells are the per-byte cells of a split granule.
type SideCells [GranuleSize][CellWords]uint64

// splitArena hands out side cells from one reservation (mapped on the
// first split, backed by pages only as they are used, never freed). A
// split cell stores the offset of its side cells in the reservation.
type splitArena struct {
	mu   sync.Mutex
	base unsafe.Pointer
	used uintptr
}

// SplitReserve is the address space reserved for side cells: 16 million
// split granules.
const SplitReserve = 4 << 30

// reserve maps the reservation unless it is; the caller holds a.mu.
func (a *splitArena) reserve() bool {
	if a.base == nil {
		p, err := unix.MmapPtr(-1, 0, nil, SplitReserve, mmapProt, mmapFlags)
		if err != nil {
			return false
		}
		atomic.StorePointer(&a.base, p)
		a.used = unsafe.Sizeof(SideCells{}) // offset 0 is never handed out
	}
	return true
}

func (a *splitArena) alloc() (uint64, bool) {
	const size = unsafe.Sizeof(SideCells{})
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.reserve() {
		return 0, false
	}
	if a.used+size > SplitReserve {
		return 0, false
	}
	off := a.used
	a.used += size
	return uint64(off), true
}

// Split turns cell c (locked by the caller, not split, not New), whose word
// 0 the caller read as w0, into a split granule and returns its side
// cells. It returns nil when no memory is left (the granule then stays one
// location), and nil and moved when word 0 no longer holds w0: the C fast
// path changed the cell meanwhile, and the caller looks at it again.
//
// The fast path changes a cell without the stripe lock: word 0 by
// compare-and-swap, then words 1 to 3. So the split takes word 0 first,
// from w0 to StateBusy by compare-and-swap, which the fast path leaves
// alone, and quiet waits for the move that wrote w0, or began before the
// cell was taken, to write words 1 to 3 (Take). Until 2026-11-27 word 0 was
// simply stored after word 1: a move of the cell by its owner in between
// was lost, and a fast path that read the new word 1 with the old word 0
// took the side cells' offset for a lockset. A cell in msm.Spin, which
// only the Go side changes, skips StateBusy: the fast path asks whether a
// store is to a synchronisation variable by its state (hg_is_sync).
func (m *Memory) Split(c *[CellWords]uint64, w0 uint64, quiet func()) (s *SideCells, moved bool) {
	spin := Word0State(w0) == uint8(msm.Spin)
	if !spin && !Take(c, w0, quiet) {
		return nil, true
	}
	off, ok := m.split.alloc()
	if !ok {
		atomic.StoreUint64(&c[0], w0)
		return nil, false
	}
	s = m.side(off)
	cell := [CellWords]uint64{w0, atomic.LoadUint64(&c[1]), atomic.LoadUint64(&c[2]), atomic.LoadUint64(&c[3])}
	touched := (w0 & TouchedMask) >> TouchedShift
	for b := range s {
		if touched&(1<<b) != 0 {
			s[b] = cell
		}
	}
	atomic.StoreUint64(&c[1], off)
	// Word 0 last: the fast path reads word 1 after it says split.
	atomic.StoreUint64(&c[0], StateSplit<<StateShift)
	return s, false
}

// Take takes cell c, whose word 0 the caller read as w0, from the C fast
// path: word 0 becomes StateBusy by compare-and-swap (false when it no
// longer holds w0), which the fast path leaves to the Go side. quiet (nil:
// none) then waits until no fast path is still moving the cell: the move
// that wrote w0, or one that read w0 before the compare-and-swap, may be
// writing words 1 to 3, which it does only after a compare-and-swap of
// its own on word 0 that came first. The caller stores word 0 last, and
// holds the stripe lock.
func Take(c *[CellWords]uint64, w0 uint64, quiet func()) bool {
	if !atomic.CompareAndSwapUint64(&c[0], w0, StateBusy<<StateShift) {
		return false
	}
	if quiet != nil {
		quiet()
	}
	return true
}

// SplitBase is the address of the side cells' reservation (mapped now if
// it was not), for a fast path outside Go: the side cells of a split cell
// are at SplitBase() + word 1, laid out as SideCells (a side cell's four
// words together). 0 when the reservation cannot be mapped.
func (m *Memory) SplitBase() uintptr {
	m.split.mu.Lock()
	defer m.split.mu.Unlock()
	if !m.split.reserve() {
		return 0
	}
	return uintptr(m.split.base)
}

// Side returns the side cells of a split cell.
func (m *Memory) Side(c *[CellWords]uint64) *SideCells { return m.side(c[1]) }

func (m *Memory) side(off uint64) *SideCells {
	return (*SideCells)(unsafe.Add(atomic.LoadPointer(&m.split.base), off))
}

// IsSplit reports whether cell c is a split granule.
func IsSplit(c *[CellWords]uint64) bool { return c[0]>>StateShift == StateSplit }

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
	if m.split.base == nil {
		return 0
	}
	return int64(m.split.used - unsafe.Sizeof(SideCells{}))
}
