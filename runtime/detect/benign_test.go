package detect

import (
	"reflect"
	"testing"
)

// A race on a range declared benign is not reported; one on the byte
// after it, in the same run, is.
func TestBenignRangeNotReported(t *testing.T) {
	b := newBench(t, "")
	t1 := b.create(0, 0x500)
	t2 := b.create(0, 0x510)
	b.d.BenignRange(x, 8, true)
	b.flush(t1, wr(x+4, 4, 0x1001), wr(x+8, 4, 0x1002))
	b.flush(t2, wr(x+4, 4, 0x2001), wr(x+8, 4, 0x2002))
	b.d.Stack(t2, CallStack{RA: []uint64{0x2100}})
	races, out := b.finish()
	wantReports(t, races, out, 1, "Write of size 4 at 0x10008 by thread T2", "#0 0x2002 ")
}

// Ranges merge when they touch and are cut back when withdrawn; covers
// answers for any overlap.
func TestBenignRangesSetAndCovers(t *testing.T) {
	var b benignRanges
	b.set(addrRange{0x100, 0x108}, true)
	b.set(addrRange{0x110, 0x120}, true)
	b.set(addrRange{0x108, 0x110}, true) // bridges the two
	if want := []addrRange{{0x100, 0x120}}; !reflect.DeepEqual(b.ranges, want) {
		t.Fatalf("ranges %x, want %x", b.ranges, want)
	}
	b.set(addrRange{0x104, 0x118}, false)
	if want := []addrRange{{0x100, 0x104}, {0x118, 0x120}}; !reflect.DeepEqual(b.ranges, want) {
		t.Fatalf("after withdrawal: ranges %x, want %x", b.ranges, want)
	}
	for _, c := range []struct {
		addr, size uint64
		want       bool
	}{
		{0xf8, 8, false}, {0xfc, 8, true}, {0x103, 1, true}, {0x104, 8, false},
		{0x110, 8, false}, {0x117, 2, true}, {0x11f, 1, true}, {0x120, 4, false},
	} {
		if got := b.covers(c.addr, c.size); got != c.want {
			t.Errorf("covers(%#x, %d) = %v, want %v", c.addr, c.size, got, c.want)
		}
	}
}
