package shadow

import (
	"math/bits"
	"sync"
	"testing"
	"unsafe"
)

func newMem(t testing.TB) *Memory {
	t.Helper()
	m, err := NewMemory()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Error(err)
		}
	})
	return m
}

func TestPacking(t *testing.T) {
	w := PackAccess(0xdeadbee, 0x1234, 0x6, 0x1000, 16, 77)
	pc, tid, fl, sz, ls := UnpackAccess(w)
	if pc != 0xdeadbee || tid != 0x1234 || fl != 0x6 || sz != 16 || ls != 77 {
		t.Errorf("UnpackAccess = %x %x %x %d %d", pc, tid, fl, sz, ls)
	}
	if pc, _, _, sz, ls := UnpackAccess(PackAccess(0x10000000, 1, 1, 0x1000, 200, 1<<20)); pc != 0 || sz != 128 || ls != AccessLocksUnknown {
		t.Errorf("out of range: pc %x size %d locks %d", pc, sz, ls)
	}
	for _, c := range []struct{ addr, size, want uint64 }{{0x1002, 1, 4}, {0x1003, 1, 8}, {0x1002, 2, 12}, {0x1000, 8, 0xff}, {0x1003, 2, 0x18}, {0x1004, 4, 0xf0}, {0x1006, 4, 0xff}} {
		if got := AccessBytes(PackAccess(1, 1, 1, c.addr, c.size, 0)); got != c.want {
			t.Errorf("AccessBytes(%#x, %d) = %b, want %b", c.addr, c.size, got, c.want)
		}
	}
	ls, tsid := UnpackSets(PackSets(7, 0xfffffff0))
	if ls != 7 || tsid != 0xfffffff0 {
		t.Error("UnpackSets")
	}
}

func TestCellLookup(t *testing.T) {
	m := newMem(t)
	const a = 0x7f00_1234_5678
	if m.Lookup(a) != nil {
		t.Fatal("Lookup of an untouched address must be nil")
	}
	if n := testing.AllocsPerRun(100, func() { m.Lookup(a + 0x10000000) }); n != 0 {
		t.Errorf("Lookup allocates %v", n)
	}
	if m.Stats().Chunks != 0 {
		t.Fatal("Lookup mapped a chunk")
	}
	c := m.Cell(a)
	if c == nil || *c != [CellWords]uint64{} {
		t.Fatal("new cell must be zero")
	}
	c[0], c[1], c[2] = 1, 2, 3
	if m.Cell(a+7) != c || m.Lookup(a+1) != c || m.Cell(a-1) == c || m.Cell(a+8) == c {
		t.Error("granule mapping")
	}
	if uintptr(unsafe.Pointer(m.Cell(a+8)))-uintptr(unsafe.Pointer(c)) != CellBytes {
		t.Error("cells of neighbouring granules must be adjacent")
	}
	if *m.Lookup(a) != [CellWords]uint64{1, 2, 3} {
		t.Error("cell contents lost")
	}
	if n := testing.AllocsPerRun(100, func() { m.Cell(a) }); n != 0 {
		t.Errorf("Cell allocates %v", n)
	}
	if m.Cell(MaxAddr) != nil || m.Lookup(^uint64(0)) != nil || m.Cell(MaxAddr-1) == nil {
		t.Error("address space limits")
	}
	// the fast-path recipe of DirectoryBase
	if m.DirectoryBase() != uintptr(m.dir) {
		t.Error("DirectoryBase")
	}
	dir := unsafe.Slice((*uintptr)(m.dir), DirEntries)
	chunk := dir[a>>ChunkShift]
	if chunk == 0 || chunk+uintptr((a>>GranuleShift)&(GranulesPerChunk-1))*CellBytes != uintptr(unsafe.Pointer(c)) {
		t.Error("DirectoryBase recipe")
	}
	st := m.Stats()
	if st.Chunks != 2 || st.MappedBytes != 2*ChunkCellBytes || st.DirBytes != DirBytes {
		t.Errorf("Stats = %+v", st)
	}
}

func collect(m *Memory, addr, size uint64) (gs []uint64) {
	m.Range(addr, size, func(g uint64, c *[CellWords]uint64) {
		if c != m.Lookup(g) {
			panic("Range gave a cell that is not the granule's")
		}
		gs = append(gs, g)
	})
	return gs
}

func TestRange(t *testing.T) {
	m := newMem(t)
	const base = 0x5555_0000_0000
	for _, c := range []struct {
		addr, size uint64
		first      uint64
		n          int
	}{
		{base, 8, base, 1},
		{base + 1, 1, base, 1},
		{base + 7, 2, base, 2},
		{base, 16, base, 2},
		{base + 1, 32, base, 5},
		{base + 8, 32, base + 8, 4},
		{base + 2, 0, 0, 0},
		{base + ChunkSize - 12, 32, base + ChunkSize - 16, 5}, // crosses a chunk
		{base + 3*ChunkSize - 8, 2*ChunkSize + 16, base + 3*ChunkSize - 8, (2*ChunkSize + 16) / 8},
		{MaxAddr - 12, 32, MaxAddr - 16, 2}, // clipped at the top
		{MaxAddr, 16, 0, 0},
	} {
		gs := collect(m, c.addr, c.size)
		if len(gs) != c.n {
			t.Errorf("Range(%#x, %d): %d granules, want %d", c.addr, c.size, len(gs), c.n)
			continue
		}
		for i, g := range gs {
			if g != c.first+uint64(i)*GranuleSize {
				t.Errorf("Range(%#x, %d): granule %d at %#x", c.addr, c.size, i, g)
				break
			}
		}
	}
	// RangeLocked visits the same granules
	var n int
	m.RangeLocked(base+ChunkSize-12, 32, func(uint64, *[CellWords]uint64) { n++ })
	if n != 5 {
		t.Errorf("RangeLocked visited %d", n)
	}
}

func TestReset(t *testing.T) {
	m := newMem(t)
	const base = 0x6000_0000_0000 // chunk-aligned
	lo, hi := uint64(base+ChunkSize-40000), uint64(base+3*ChunkSize+40000)
	fill := func() {
		m.Range(lo, hi-lo, func(g uint64, c *[CellWords]uint64) { *c = [CellWords]uint64{g, ^g, 1} })
	}
	check := func(rlo, rhi uint64) {
		t.Helper()
		bad := 0
		m.Range(lo, hi-lo, func(g uint64, c *[CellWords]uint64) {
			zero := g+GranuleSize > rlo && g < rhi
			want := [CellWords]uint64{g, ^g, 1}
			if zero {
				want = [CellWords]uint64{}
			}
			if *c != want && bad < 5 {
				bad++
				t.Errorf("reset [%#x,%#x): granule %#x = %x", rlo, rhi, g, *c)
			}
		})
	}
	for _, r := range [][2]uint64{
		{base + 10, base + 11},                                 // one byte
		{base + ChunkSize - 5, base + ChunkSize + 5},           // small, across a chunk boundary
		{base + 1000, base + 1000 + 100000},                    // madvise path inside a chunk
		{base + ChunkSize - 30001, base + 3*ChunkSize + 30003}, // spans 3 chunks, whole middle chunk
		{base + 2*ChunkSize, base + 3*ChunkSize},               // exactly one chunk
	} {
		fill()
		m.Reset(r[0], r[1]-r[0])
		check(r[0], r[1])
	}
	// untouched chunks are skipped without mapping them
	before := m.Stats().Chunks
	m.Reset(0x1000_0000_0000, 64*ChunkSize)
	if m.Stats().Chunks != before {
		t.Error("Reset mapped chunks")
	}
	m.Reset(0, 0)
	m.Reset(MaxAddr-4, 100)
}

// Concurrent first touches of the same chunks agree on one mapping each.
func TestCellConcurrentFirstTouch(t *testing.T) {
	m := newMem(t)
	const G, chunks = 8, 16
	const base = 0x2000_0000_0000
	got := make([][chunks]*[CellWords]uint64, G)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for g := range G {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for i := range chunks {
				got[g][i] = m.Cell(base + uint64(i)*ChunkSize + 64)
			}
		}()
	}
	close(start)
	wg.Wait()
	for g := 1; g < G; g++ {
		if got[g] != got[0] {
			t.Fatal("goroutines got different cells for the same address")
		}
	}
	if m.Stats().Chunks != chunks {
		t.Errorf("%d chunks mapped, want %d", m.Stats().Chunks, chunks)
	}
}

// Read-modify-write of cells under the stripe locks loses no update, with
// single-granule and multi-granule (LockRange) updates mixed.
func TestStripedLocks(t *testing.T) {
	m := newMem(t)
	const base = 0x3000_0000_0000
	const G, N, span = 8, 20000, 64 // 64 granules, all wrapping stripes too
	addrs := []uint64{base, base + GranuleSize*(LockStripes-2)}
	var wg sync.WaitGroup
	for g := range G {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range N {
				a := addrs[i%2] + uint64((i*7+g)%span)*GranuleSize
				if i%5 == 0 {
					// an access of 4 granules' length at an unaligned address: 5 granules
					m.LockRange(a+1, 4*GranuleSize)
					m.Range(a+1, 4*GranuleSize, func(_ uint64, c *[CellWords]uint64) { c[0]++ })
					m.UnlockRange(a+1, 4*GranuleSize)
					continue
				}
				m.Lock(a)
				c := m.Cell(a)
				c[0]++
				m.Unlock(a)
			}
		}()
	}
	wg.Wait()
	var total uint64
	for _, b := range addrs {
		m.Range(b, (span+5)*GranuleSize, func(_ uint64, c *[CellWords]uint64) { total += c[0] })
	}
	if want := uint64(G * N / 5 * (4 + 5)); total != want {
		t.Errorf("total = %d, want %d", total, want)
	}
}

// Many goroutines touching cells, interning sets and reading them back, as
// the runtime would.
func TestEverythingConcurrent(t *testing.T) {
	m := newMem(t)
	ls := NewLocksets()
	ts := NewThreadsets()
	const G, N = 8, 3000
	const base = 0x4000_0000_0000
	var wg sync.WaitGroup
	for g := range G {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tid := uint16(g + 1)
			held := ls.Make(0x100, uint64(0x200+g*8))
			for i := range N {
				a := base + uint64(i%500)*ChunkSize/256 + uint64(i%7)
				m.RangeLocked(a, 8, func(_ uint64, c *[CellWords]uint64) {
					l, s := UnpackSets(c[1])
					if c[0] == 0 {
						l, s = held, ts.Single(tid)
					} else {
						l = ls.Intersect(l, held)
						s = ts.Add(s, tid)
					}
					if !ls.Contains(l, 0x100) {
						panic("common lock lost")
					}
					c[0] = uint64(MakeEpoch(tid, uint64(i+1)))
					c[1] = PackSets(l, s)
					c[2] = PackAccess(uint32(i), tid, 2, 0, 8, 0)
				})
			}
		}()
	}
	wg.Wait()
	m.Range(base, 500*ChunkSize/256+16, func(g uint64, c *[CellWords]uint64) {
		if c[0] == 0 {
			return
		}
		l, s := UnpackSets(c[1])
		if ls.Len(l) < 1 || ls.Members(l)[0] != 0x100 || ts.Len(s) < 1 {
			t.Fatalf("granule %#x: lockset %x threadset %v", g, ls.Members(l), ts.Members(s))
		}
	})
}

func TestLockRangeLarge(t *testing.T) {
	m := newMem(t)
	m.LockRange(0x1000, GranuleSize*LockStripes+100) // every stripe
	if m.stripes[0].TryLock() || m.stripes[LockStripes-1].TryLock() {
		t.Error("LockRange of a large range must hold every stripe")
	}
	m.UnlockRange(0x1000, GranuleSize*LockStripes+100)
	m.LockRange(GranuleSize*(LockStripes-1)+2, GranuleSize) // wraps: stripes 4095, 0
	if m.stripes[0].TryLock() || m.stripes[LockStripes-1].TryLock() || !m.stripes[1].TryLock() {
		t.Error("wrapping LockRange")
	}
	m.stripes[1].Unlock()
	m.UnlockRange(GranuleSize*(LockStripes-1)+2, GranuleSize)
	for i := range m.stripes {
		if !m.stripes[i].TryLock() {
			t.Fatalf("stripe %d still locked", i)
		}
		m.stripes[i].Unlock()
	}
}

// An access word for the partial granule of a longer access keeps exactly
// the bytes covered there (any run of them: an access's share of a
// granule is contiguous), including the seven low bytes of a last one.
func TestPackAccessBytes(t *testing.T) {
	for lo := range GranuleSize {
		for hi := lo + 1; hi <= GranuleSize; hi++ {
			mask := uint64(1<<hi-1) &^ (1<<lo - 1)
			w := PackAccessBytes(0x1234, 7, 1, mask, 5)
			pc, tid, flags, size, locks := UnpackAccess(w)
			if AccessBytes(w) != mask || pc != 0x1234 || tid != 7 || flags != 1 || locks != 5 || size != uint64(bits.OnesCount64(mask)) {
				t.Errorf("mask %08b: bytes %08b pc %#x tid %d flags %d size %d locks %d", mask, AccessBytes(w), pc, tid, flags, size, locks)
			}
		}
	}
	if w := PackAccess(0x10, 1, 2, 0x1001, 2, AccessLocksUnknown+5); AccessBytes(w) != 0b0110 {
		t.Errorf("plain word: bytes %08b", AccessBytes(w))
	}
}
