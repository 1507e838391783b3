package shadow

import (
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Shadow memory layout (see the package documentation).
const (
	GranuleShift     = 3                            // a granule is 8 application bytes
	GranuleSize      = 1 << GranuleShift            //
	CellWords        = 4                            // uint64 words per granule
	CellBytes        = CellWords * 8                // 32
	AddrBits         = 47                           // user address space covered
	MaxAddr          = 1 << AddrBits                // addresses >= MaxAddr have no shadow
	ChunkShift       = 22                           // a chunk covers 4 MiB of application space
	ChunkSize        = 1 << ChunkShift              //
	GranulesPerChunk = ChunkSize / GranuleSize      // 512 Ki
	ChunkCellBytes   = GranulesPerChunk * CellBytes // 16 MiB of cells per chunk
	DirEntries       = MaxAddr >> ChunkShift        // 2^25 directory entries
	DirBytes         = DirEntries * 8               // 256 MiB of address space, touched sparsely
	LockStripes      = 4096
)

// Memory maps application addresses to shadow cells kept outside the Go
// heap. All methods except Close are safe for concurrent use.
type Memory struct {
	dir    unsafe.Pointer // DirEntries chunk pointers (nil = untouched), mmap'd
	chunks atomic.Int64
	failed atomic.Int64 // chunk mmaps that failed
	closed bool
	arena  *chunkArena // chunks come from here when set (NewMemoryIn)

	split splitArena // side cells of split granules

	listMu sync.Mutex
	list   []unsafe.Pointer // installed chunks, for Close

	stripes [LockStripes]paddedMutex
}

type paddedMutex struct {
	sync.Mutex
	_ [64 - unsafe.Sizeof(sync.Mutex{})]byte
}

const (
	mmapProt  = unix.PROT_READ | unix.PROT_WRITE
	mmapFlags = unix.MAP_PRIVATE | unix.MAP_ANONYMOUS | unix.MAP_NORESERVE
)

// NewMemory reserves the directory (256 MiB of address space, backed by
// pages only where chunks are installed).
func NewMemory() (*Memory, error) {
	p, err := unix.MmapPtr(-1, 0, nil, DirBytes, mmapProt, mmapFlags)
	if err != nil {
		return nil, fmt.Errorf("shadow: mapping the shadow directory: %w", err)
	}
	return &Memory{dir: p}, nil
}

// chunkArena is a caller's mapping that holds the directory and then the
// chunks, handed out in order and never returned. The runtime's detector
// for a forked child works in one (runtime/remote.c): the child's fast path
// and the detector's process map it at the same address, so the
// directory's chunk pointers are valid in both. Its pages are shared, so
// releasing them takes MADV_REMOVE (MADV_DONTNEED leaves a shared page's
// contents in place).
type chunkArena struct {
	base       unsafe.Pointer
	used, size uintptr
	mu         sync.Mutex
}

func (a *chunkArena) alloc() unsafe.Pointer {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.size-a.used < ChunkCellBytes {
		return nil
	}
	p := unsafe.Add(a.base, a.used)
	a.used += ChunkCellBytes
	return p
}

// NewMemoryIn uses the shared mapping [base, base+size) for the directory
// and the chunks: base is page aligned and the mapping reads as zeros.
// Chunks stop being installed when it is full (counted in
// Stats.FailedChunks). Close leaves the mapping alone.
func NewMemoryIn(base unsafe.Pointer, size uintptr) (*Memory, error) {
	if size < DirBytes+ChunkCellBytes {
		return nil, fmt.Errorf("shadow: a %d-byte arena cannot hold the directory and a chunk", size)
	}
	return &Memory{dir: base, arena: &chunkArena{base: base, used: DirBytes, size: size}}, nil
}

// Close unmaps everything. No other method may run during or after Close.
func (m *Memory) Close() error {
	if m.closed {
		return nil
	}
	m.closed = true
	if m.arena != nil {
		return nil // the caller's mapping
	}
	var first error
	m.listMu.Lock()
	defer m.listMu.Unlock()
	for _, c := range m.list {
		if err := unix.MunmapPtr(c, ChunkCellBytes); err != nil && first == nil {
			first = err
		}
	}
	m.list = nil
	if err := unix.MunmapPtr(m.dir, DirBytes); err != nil && first == nil {
		first = err
	}
	return first
}

// DirectoryBase returns the address of the directory, for a fast path
// outside Go: the cell of addr < MaxAddr is at
//
//	chunk = ((uintptr *)base)[addr >> ChunkShift]   // 0: untouched, call Cell
//	cell  = chunk + ((addr >> GranuleShift) & (GranulesPerChunk-1)) * CellBytes
//
// Chunk pointers are installed once and never change until Close.
func (m *Memory) DirectoryBase() uintptr { return uintptr(m.dir) }

func (m *Memory) slot(ci uint64) *unsafe.Pointer {
	return (*unsafe.Pointer)(unsafe.Add(m.dir, ci*8))
}

func (m *Memory) chunk(ci uint64) unsafe.Pointer { return atomic.LoadPointer(m.slot(ci)) }

// newChunk maps the cells of chunk ci and installs them, unless another
// thread was first. nil if the mapping fails.
func (m *Memory) newChunk(ci uint64) unsafe.Pointer {
	if m.arena != nil {
		// One chunk is wasted when another thread installs first: rare,
		// and the arena is address space, backed only where touched.
		p := m.arena.alloc()
		if p == nil {
			m.failed.Add(1)
			return m.chunk(ci)
		}
		if atomic.CompareAndSwapPointer(m.slot(ci), nil, p) {
			m.chunks.Add(1)
		}
		return m.chunk(ci)
	}
	p, err := unix.MmapPtr(-1, 0, nil, ChunkCellBytes, mmapProt, mmapFlags)
	if err != nil {
		m.failed.Add(1)
		return m.chunk(ci)
	}
	if atomic.CompareAndSwapPointer(m.slot(ci), nil, p) {
		m.chunks.Add(1)
		m.listMu.Lock()
		m.list = append(m.list, p)
		m.listMu.Unlock()
		return p
	}
	unix.MunmapPtr(p, ChunkCellBytes)
	return m.chunk(ci)
}

func cellAt(chunk unsafe.Pointer, addr uint64) *[CellWords]uint64 {
	return (*[CellWords]uint64)(unsafe.Add(chunk, (addr>>GranuleShift&(GranulesPerChunk-1))*CellBytes))
}

// Cell returns the cell of the granule holding addr, mapping its chunk on
// first touch. It returns nil only for addr >= MaxAddr or when the kernel
// refuses the mapping. Cell pointers are stable.
func (m *Memory) Cell(addr uint64) *[CellWords]uint64 {
	if addr >= MaxAddr {
		return nil
	}
	c := m.chunk(addr >> ChunkShift)
	if c == nil {
		if c = m.newChunk(addr >> ChunkShift); c == nil {
			return nil
		}
	}
	return cellAt(c, addr)
}

// Lookup returns the cell of addr, or nil if its chunk was never touched.
// It never maps or allocates anything.
func (m *Memory) Lookup(addr uint64) *[CellWords]uint64 {
	if addr >= MaxAddr {
		return nil
	}
	c := m.chunk(addr >> ChunkShift)
	if c == nil {
		return nil
	}
	return cellAt(c, addr)
}

// granules returns the first and last granule-aligned addresses an access
// of size bytes at addr touches, clipped to MaxAddr. ok is false when it
// touches none.
func granules(addr, size uint64) (first, last uint64, ok bool) {
	if size == 0 || addr >= MaxAddr {
		return 0, 0, false
	}
	end := addr + size - 1
	if end < addr || end >= MaxAddr {
		end = MaxAddr - 1
	}
	return addr &^ (GranuleSize - 1), end &^ (GranuleSize - 1), true
}

// Range calls fn for every granule that an access of size bytes at addr
// touches, in increasing address order, with the granule's address and cell
// (chunks are mapped as needed; granules whose chunk cannot be mapped, or
// at or above MaxAddr, are skipped). A 16-byte access at an unaligned
// address touches 5 granules; size 0 touches none.
func (m *Memory) Range(addr, size uint64, fn func(granuleAddr uint64, c *[CellWords]uint64)) {
	chunkRuns(addr, size, func(ci, g, stop uint64) {
		c := m.chunk(ci)
		if c == nil {
			c = m.newChunk(ci)
		}
		if c == nil {
			return
		}
		p := cellAt(c, g)
		for {
			fn(g, p)
			if g == stop {
				break
			}
			g += GranuleSize
			p = (*[CellWords]uint64)(unsafe.Add(unsafe.Pointer(p), CellBytes))
		}
	})
}

// chunkRuns splits the granules an access of size bytes at addr touches
// into runs within one chunk: fn gets the chunk index and the first and
// last granule address of each run, in increasing order.
func chunkRuns(addr, size uint64, fn func(ci, first, last uint64)) {
	g, last, ok := granules(addr, size)
	if !ok {
		return
	}
	for {
		ci := g >> ChunkShift
		stop := min(last, ci<<ChunkShift|(ChunkSize-GranuleSize))
		fn(ci, g, stop)
		if stop == last {
			return
		}
		g = stop + GranuleSize
	}
}

// madviseMin is the size of cell memory above which Reset gives whole pages
// back to the kernel instead of storing zeros.
const madviseMin = 64 << 10

// Reset zeroes the cells of every granule that [addr, addr+size) touches
// (whole granules: a granule partly inside the range is cleared too). Chunks
// never touched are skipped without mapping them; large stretches of cells
// are returned to the kernel with madvise(MADV_DONTNEED), which reads back as
// zeros and also releases the memory. The caller must make sure no other
// thread updates these cells meanwhile (e.g. malloc/free of the block).
func (m *Memory) Reset(addr, size uint64) {
	chunkRuns(addr, size, func(ci, g, stop uint64) {
		if c := m.chunk(ci); c != nil {
			lo := (g >> GranuleShift & (GranulesPerChunk - 1)) * CellBytes
			hi := (stop>>GranuleShift&(GranulesPerChunk-1) + 1) * CellBytes
			zeroCells(c, lo, hi, m.arena != nil)
		}
	})
}

// zeroCells zeroes bytes [lo, hi) of a chunk; shared says the chunk is in
// a shared arena, whose pages MADV_DONTNEED would not clear.
func zeroCells(c unsafe.Pointer, lo, hi uint64, shared bool) {
	advice := unix.MADV_DONTNEED
	if shared {
		advice = unix.MADV_REMOVE
	}
	const page = 4096
	if hi-lo >= madviseMin {
		plo := (lo + page - 1) &^ (page - 1)
		phi := hi &^ (page - 1)
		if phi > plo {
			b := unsafe.Slice((*byte)(unsafe.Add(c, plo)), phi-plo)
			if unix.Madvise(b, advice) == nil || zeroLocked(b) {
				clear(unsafe.Slice((*byte)(unsafe.Add(c, lo)), plo-lo))
				clear(unsafe.Slice((*byte)(unsafe.Add(c, phi)), hi-phi))
				return
			}
		}
	}
	// Cells are 8-byte aligned and their size is a multiple of 8.
	clear(unsafe.Slice((*uint64)(unsafe.Add(c, lo)), (hi-lo)/8))
}

// zeroLocked zeroes the whole pages of cells b, which madvise would not
// drop (the process locked its memory: mlockall), and says whether it
// could: the pages in memory (mincore) take stores; those not in memory
// read as zeros already when there is no swap, and a store would fault
// them in and lock them (a program that locked its memory and freed a 2
// GB table it had touched once a megabyte: 8.4 GB resident and 54 s,
// native 0.2 s). With swap, a page out there may hold cells: each of its
// words is read and only those not zero stored. runtime/shadow.c's
// hg_zero_pages and hg_zero_absent do the same for the C side's resets.
func zeroLocked(b []byte) bool {
	const page = 4096
	in := make([]byte, len(b)/page)
	if mincore(b, in) != nil {
		return false
	}
	var si unix.Sysinfo_t
	swap := unix.Sysinfo(&si) != nil || si.Totalswap != 0
	for i := 0; i < len(in); {
		j := i + 1
		for j < len(in) && in[j]&1 == in[i]&1 {
			j++
		}
		run := b[i*page : j*page]
		switch {
		case in[i]&1 != 0:
			clear(run)
		case swap:
			words := unsafe.Slice((*uint64)(unsafe.Pointer(&run[0])), len(run)/8)
			for k := range words {
				if words[k] != 0 {
					words[k] = 0
				}
			}
		}
		i = j
	}
	return true
}

// mincore is the system call (golang.org/x/sys/unix has no wrapper): in
// gets a byte per page of b, bit 0 set for a page in memory.
func mincore(b, in []byte) error {
	_, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(unsafe.Pointer(&in[0])))
	if e != 0 {
		return e
	}
	return nil
}

// Lock locks the stripe of addr's granule. The runtime holds it while it
// reads, decides and writes the cell. Stripes are picked by granule index
// modulo LockStripes, so neighbouring granules use different stripes. Never
// hold two stripes at once except through LockRange.
func (m *Memory) Lock(addr uint64) { m.stripes[stripe(addr)].Lock() }

// Unlock unlocks the stripe of addr's granule.
func (m *Memory) Unlock(addr uint64) { m.stripes[stripe(addr)].Unlock() }

func stripe(addr uint64) uint64 { return addr >> GranuleShift & (LockStripes - 1) }

// LockRange locks the stripes of every granule an access of size bytes at
// addr touches, in stripe order (so two LockRange calls cannot deadlock).
// Unlock with UnlockRange(addr, size).
func (m *Memory) LockRange(addr, size uint64) {
	m.stripeRange(addr, size, func(mu *paddedMutex) { mu.Lock() })
}

// UnlockRange undoes LockRange(addr, size).
func (m *Memory) UnlockRange(addr, size uint64) {
	m.stripeRange(addr, size, func(mu *paddedMutex) { mu.Unlock() })
}

func (m *Memory) stripeRange(addr, size uint64, f func(*paddedMutex)) {
	g, last, ok := granules(addr, size)
	if !ok {
		return
	}
	n := (last-g)>>GranuleShift + 1
	if n >= LockStripes {
		for i := range m.stripes {
			f(&m.stripes[i])
		}
		return
	}
	s0 := stripe(g)
	s1 := s0 + n // exclusive, may pass LockStripes
	if s1 > LockStripes {
		for i := uint64(0); i < s1-LockStripes; i++ {
			f(&m.stripes[i])
		}
		s1 = LockStripes
	}
	for i := s0; i < s1; i++ {
		f(&m.stripes[i])
	}
}

// RangeLocked is Range with the stripe of each granule held while fn runs on
// it (one stripe at a time).
func (m *Memory) RangeLocked(addr, size uint64, fn func(granuleAddr uint64, c *[CellWords]uint64)) {
	m.Range(addr, size, func(g uint64, c *[CellWords]uint64) {
		mu := &m.stripes[stripe(g)]
		mu.Lock()
		fn(g, c)
		mu.Unlock()
	})
}

// MemStats describes the shadow memory.
type MemStats struct {
	Chunks       int64 // chunks mapped
	MappedBytes  int64 // address space of mapped chunks (Chunks * ChunkCellBytes)
	DirBytes     int64 // address space reserved for the directory
	FailedChunks int64 // chunk mappings the kernel refused
	SplitBytes   int64 // side cells of split granules (byte precision)
}

// Stats returns the amount of shadow mapped. The memory actually resident is
// lower: cell pages are backed only once written.
func (m *Memory) Stats() MemStats {
	n := m.chunks.Load()
	return MemStats{Chunks: n, MappedBytes: n * ChunkCellBytes, DirBytes: DirBytes, FailedChunks: m.failed.Load(), SplitBytes: m.splitBytes()}
}
