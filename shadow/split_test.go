package shadow

import (
	"sync/atomic"
	"testing"
)

func TestByteMask(t *testing.T) {
	cases := []struct {
		addr, end, g, want uint64
	}{
		{0x1000, 0x1001, 0x1000, 0b0001},
		{0x1001, 0x1002, 0x1000, 0b0010},
		{0x1006, 0x100a, 0x1000, 0b11000000},
		{0x1006, 0x100a, 0x1008, 0b0011},
		{0x1000, 0x1020, 0x1008, 0xff},
		{0x1000, 0x1008, 0x1008, 0},
		{0x1002, 0x1006, 0x1000, 0b00111100},
	}
	for _, c := range cases {
		if got := ByteMask(c.addr, c.end, c.g); got != c.want {
			t.Errorf("ByteMask(%#x, %#x, %#x) = %08b, want %08b", c.addr, c.end, c.g, got, c.want)
		}
	}
}

func TestSplitCopiesTouchedBytesOnly(t *testing.T) {
	m, err := NewMemory()
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	c := m.Cell(0x10000)
	c[0] = 2<<60 | 77 | 0b0101<<TouchedShift
	c[1] = PackSets(3, 4)
	c[2] = PackAccess(0x401000, 1, 2, 0, 1, 0)
	before := *c
	if s, moved := m.Split(c, c[0]+1, nil); s != nil || !moved || *c != before {
		t.Fatalf("Split from a word 0 the cell no longer holds: %p, moved %v, cell %#x", s, moved, *c)
	}
	s, moved := m.Split(c, c[0], nil)
	if s == nil || moved {
		t.Fatalf("Split returned %p, moved %v", s, moved)
	}
	if !IsSplit(c) || m.Side(c) != s {
		t.Fatalf("cell not marked split: %#x %#x", c[0], c[1])
	}
	for b := range s {
		want := [CellWords]uint64{}
		if b == 0 || b == 2 {
			want = before
		}
		if s[b] != want {
			t.Errorf("side cell %d = %#x, want %#x", b, s[b], want)
		}
	}
	if st := m.Stats(); st.SplitBytes < 96 {
		t.Errorf("SplitBytes = %d, want at least 96", st.SplitBytes)
	}
	// A reset forgets the split: the granule is one never-accessed location again.
	m.Reset(0x10000, 4)
	if IsSplit(c) || c[1] != 0 {
		t.Errorf("reset left the split: %#x %#x", c[0], c[1])
	}
}

func TestSplitManyGranules(t *testing.T) {
	m, err := NewMemory()
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	seen := map[*SideCells]bool{}
	for i := uint64(0); i < 20000; i++ { // more than one slab
		c := m.Cell(0x200000 + 4*i)
		c[0] = 1<<60 | 1<<TouchedShift
		s, _ := m.Split(c, c[0], nil)
		if s == nil || seen[s] {
			t.Fatalf("granule %d: side cells %p reused or nil", i, s)
		}
		seen[s] = true
		s[3][0] = i // writable, and distinct from neighbours
	}
}

// TestSplitLosesNoMove splits granules while another goroutine moves
// them as the C fast path does (a compare-and-swap of word 0, here one
// clock tick at a time): every move that succeeded must be in the side
// cells, and none may succeed once the split took the cell.
func TestSplitLosesNoMove(t *testing.T) {
	m, err := NewMemory()
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for i := uint64(0); i < 2000; i++ {
		c := m.Cell(0x400000 + 8*i)
		start := uint64(2)<<StateShift | CellEpoch(1, 10) | 1<<TouchedShift
		atomic.StoreUint64(&c[0], start)
		moves, going := make(chan uint64), make(chan struct{})
		go func() {
			n := uint64(0)
			for {
				v := atomic.LoadUint64(&c[0])
				if s := Word0State(v); s == StateBusy || s == StateSplit {
					moves <- n
					return
				}
				if atomic.CompareAndSwapUint64(&c[0], v, v+1) {
					if n++; n == 100 {
						close(going)
					}
				}
			}
		}()
		<-going
		var s *SideCells
		for s == nil {
			moved := false
			if s, moved = m.Split(c, atomic.LoadUint64(&c[0]), nil); s == nil && !moved {
				t.Fatal("no memory for side cells")
			}
		}
		n := <-moves
		if got, want := s[0][0]&CellClockMask, uint64(10)+n; got != want {
			t.Fatalf("granule %d: side cell's clock %d after %d moves from 10: a move was lost", i, got, n)
		}
	}
}
