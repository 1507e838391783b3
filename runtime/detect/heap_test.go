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
