package detect

import "testing"

// A free is a write to the block: a read by another thread before it,
// unordered, races with it, and the report names the heap block and its
// allocation site.
func TestFreeRacesWithRead(t *testing.T) {
	b := newBench(t, "")
	t1 := b.create(0, 0x500)
	t2 := b.create(0, 0x510)
	b.flush(t1, alloc(blk, 64, 0x1001))
	b.flush(t2, rd(blk+8, 4, 0x2001))
	if n := b.d.Free(t1, blk, 64, 0x1002); n != 1 {
		t.Fatalf("%d reports pending after the free, want 1", n)
	}
	races, out := b.finish()
	wantReports(t, races, out, 1,
		"  Free of size 64 at 0x30000 by thread T1:\n    #0 0x1002 (program+0x1002)\n",
		"  Previous read of size 4 by thread T2:\n    #0 0x2001 (program+0x2001)\n",
		"  Location is heap block of size 64 at 0x30000 (offset 0), allocated by thread T1 at:\n    #0 0x1001 (program+0x1001)\n")
}

// A racing access inside a live block names the block and the offset.
func TestHeapBlockNamed(t *testing.T) {
	b := newBench(t, "")
	t1 := b.create(0, 0x500)
	t2 := b.create(0, 0x510)
	b.flush(t1, alloc(blk, 64, 0x1001), wr(blk+16, 8, 0x1002))
	b.flush(t2, rd(blk+16, 8, 0x2001))
	races, out := b.finish()
	wantReports(t, races, out, 1,
		"  Location is heap block of size 64 at 0x30000 (offset 16), allocated by thread T1 at:\n    #0 0x1001 (program+0x1001)\n")
}

// A free resets the block's shadow and forgets it: an access after the
// free starts afresh (a use after free is not a race report), and a new
// block at the same address is another allocation.
func TestFreeResets(t *testing.T) {
	b := newBench(t, "")
	t1 := b.create(0, 0x500)
	t2 := b.create(0, 0x510)
	b.flush(t1, alloc(blk, 64, 0x1001), wr(blk, 8, 0x1002))
	b.d.Free(t1, blk, 64, 0x1003)
	b.flush(t2, rd(blk, 8, 0x2001))
	b.flush(t2, alloc(blk, 32, 0x2002), wr(blk+4, 4, 0x2003))
	b.flush(t1, wr(blk+4, 4, 0x1004))
	races, out := b.finish()
	wantReports(t, races, out, 1,
		"  Location is heap block of size 32 at 0x30000 (offset 4), allocated by thread T2 at:\n    #0 0x2002 (program+0x2002)\n")
}

// The allocation records survive growth and deletion: many blocks
// allocated, every other one freed, some reallocated at the same address
// by another thread; every live block is found by an address inside it,
// no freed one is, and the table does not grow with churn alone.
func TestHeapBlocksTable(t *testing.T) {
	var h heapBlocks
	const n = 50000
	addr := func(i int) uint64 { return 0x10000 + uint64(i)*48 }
	for i := range n {
		h.add(addr(i), 40, uint64(0x400000+i), int32(i%7))
	}
	for i := 0; i < n; i += 2 {
		h.remove(addr(i))
	}
	for i := 0; i < n; i += 10 {
		h.add(addr(i), 24, 0x500000, 65535) // freed, then allocated anew
	}
	h.add(addr(1), 32, 0x600000, 3) // a record replaced in place
	check := func() {
		t.Helper()
		for i := range n {
			if i%50 != 0 && i != 1 && i != n-1 {
				continue // find reads every slot: a sample
			}
			start, blk, ok := h.find(addr(i) + 20)
			switch {
			case i == 1:
				if !ok || blk != (heapBlock{32, 0x600000, 3}) {
					t.Errorf("block 1: %v %+v, want the replaced record", ok, blk)
				}
			case i%10 == 0:
				if !ok || start != addr(i) || blk != (heapBlock{24, 0x500000, 65535}) {
					t.Errorf("block %d, allocated again: %v %#x %+v", i, ok, start, blk)
				}
			case i%2 == 0:
				if ok {
					t.Errorf("freed block %d found: %#x %+v", i, start, blk)
				}
			default:
				if !ok || start != addr(i) || blk != (heapBlock{40, uint64(0x400000 + i), int32(i % 7)}) {
					t.Errorf("block %d: %v %#x %+v", i, ok, start, blk)
				}
			}
		}
	}
	check()
	if want := n/2 + n/10; h.live != want {
		t.Errorf("%d live records, want %d", h.live, want)
	}
	size := len(h.slots)
	for r := range 20 { // churn: the same number live, blocks coming and going
		for i := 0; i < n; i += 10 {
			h.remove(addr(i))
			h.add(addr(i), 24, 0x500000, 65535)
		}
		if len(h.slots) > size {
			t.Fatalf("round %d: the table grew from %d to %d slots with churn alone", r, size, len(h.slots))
		}
	}
	check()
	if _, _, ok := h.find(0x5); ok {
		t.Error("an address below every block was found")
	}
	// a block of unknown site, larger than a record holds, at the top of
	// the address space
	top := uint64(0x7ff000000000)
	h.add(top, 1<<42, 0, 9)
	if start, blk, ok := h.find(top + 5); !ok || start != top || blk != (heapBlock{heapMaxSize, 0, 9}) {
		t.Errorf("the large block: %v %#x %+v", ok, start, blk)
	}
}
