package shadow

import (
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestMemoryIn: a detector working in a shared arena (a forked child's,
// runtime/remote.c) hands out chunks from it in order, stops when it is
// full, and clears cells with MADV_REMOVE, which a second mapping of the
// same memory (the child's) must see as zeros.
func TestMemoryIn(t *testing.T) {
	fd, err := unix.MemfdCreate("shadow-test", unix.MFD_CLOEXEC)
	if err != nil {
		t.Skipf("memfd_create: %v", err)
	}
	defer unix.Close(fd)
	const size = DirBytes + 2*ChunkCellBytes
	if err := unix.Ftruncate(fd, size); err != nil {
		t.Fatal(err)
	}
	mapShared := func() unsafe.Pointer {
		p, err := unix.MmapPtr(fd, 0, nil, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_NORESERVE)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { unix.MunmapPtr(p, size) })
		return p
	}
	base, other := mapShared(), mapShared()
	m, err := NewMemoryIn(base, size)
	if err != nil {
		t.Fatal(err)
	}
	// the other mapping sees a cell at the same offset from its base
	seen := func(c *[CellWords]uint64) *uint64 {
		return (*uint64)(unsafe.Add(other, uintptr(unsafe.Pointer(c))-uintptr(base)))
	}

	const a, b, c = 0x10000000, 0x20000000, 0x30000000 // three chunks
	ca, cb := m.Cell(a), m.Cell(b)
	if ca == nil || cb == nil {
		t.Fatal("the arena holds two chunks")
	}
	if off := uintptr(unsafe.Pointer(ca)) - uintptr(base); off < DirBytes || off >= DirBytes+ChunkCellBytes {
		t.Errorf("the first chunk is at offset %#x, want just after the directory", off)
	}
	if m.Cell(c) != nil {
		t.Error("a third chunk in a two-chunk arena")
	}
	if st := m.Stats(); st.Chunks != 2 || st.FailedChunks != 1 {
		t.Errorf("stats %+v, want 2 chunks and 1 failed", st)
	}

	const span = 1 << 20 // cells of 1 MiB: freed with madvise
	for addr := uint64(a); addr < a+span; addr += GranuleSize {
		m.Cell(addr)[0] = 7
	}
	if *seen(ca) != 7 {
		t.Fatal("the second mapping does not share the cells")
	}
	m.Reset(a, span)
	for addr := uint64(a); addr < a+span; addr += 64 << 10 {
		if v := *seen(m.Cell(addr)); v != 0 {
			t.Fatalf("cell of %#x reads %d through the other mapping after Reset", addr, v)
		}
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
}
