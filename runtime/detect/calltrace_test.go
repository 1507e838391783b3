package detect

import (
	"slices"
	"testing"

	"hgrewrite/abi"
	"hgrewrite/shadow"
)

func noTails(from, to traceCall) bool { return false }

// traceBuilder writes call-trace words as the entry glue and the marks
// do (abi, "The call trace").
type traceBuilder []uint64

func (b *traceBuilder) enter(sp, fn uint32, ra uint64) {
	*b = append(*b, uint64(fn)<<32|uint64(sp), ra)
}

func (b *traceBuilder) epoch(tid uint16, clock uint64) {
	*b = append(*b, uint64(abi.TraceMarkEpoch)<<32, shadow.CellEpoch(tid, clock))
}

func (b *traceBuilder) reset() { *b = append(*b, uint64(abi.TraceMarkReset)<<32, 0) }

// ras gives each chain's return addresses, innermost first.
func ras(chains [][]traceCall) [][]uint64 {
	var out [][]uint64
	for _, c := range chains {
		var r []uint64
		for _, e := range c {
			r = append(r, e.ra)
		}
		out = append(out, r)
	}
	return out
}

// candidates fall back on the whole trace only where that loses nothing:
// the access's segment is not known, or the trace holds the thread's
// start and no mark of the segment.
func TestTraceCandidates(t *testing.T) {
	const fn, main = 0x4000, 0x1000
	var wrapped, whole traceBuilder
	for _, b := range []*traceBuilder{&wrapped, &whole} {
		if b == &whole {
			b.reset()
		}
		b.epoch(1, 7)
		b.enter(0x8000, main, 0x70)
		b.enter(0x7f00, fn, 0x1010)
	}
	for _, tc := range []struct {
		name  string
		words []uint64
		clock uint64
		want  int
	}{
		{"segment marked", wrapped, 7, 1},
		{"segment older than a wrapped trace", wrapped, 5, 0},
		{"segment not known", wrapped, 0, 1},
		{"no mark of the segment in a whole trace", whole, 5, 1},
	} {
		if got := len(candidates(tc.words, 1, fn, tc.clock, noTails)); got != tc.want {
			t.Errorf("%s: %d candidates, want %d", tc.name, got, tc.want)
		}
	}
}

func TestTraceCallers(t *testing.T) {
	const (
		main, worker, helper, leaf, other = 0x1000, 0x2000, 0x3000, 0x4000, 0x5000
	)
	tests := []struct {
		name  string
		build func(b *traceBuilder)
		fn    uint32
		clock uint64
		want  [][]uint64
	}{
		{"nested calls", func(b *traceBuilder) {
			b.enter(0x8000, main, 0x70)
			b.enter(0x7f00, worker, 0x1010)
			b.enter(0x7e00, helper, 0x2020)
			b.enter(0x7d00, leaf, 0x3030)
		}, leaf, 0, [][]uint64{{0x3030, 0x2020, 0x1010, 0x70}}},
		{"a returned frame goes at the next entry at or above it", func(b *traceBuilder) {
			b.enter(0x8000, main, 0x70)
			b.enter(0x7f00, worker, 0x1010)
			b.enter(0x7e00, other, 0x2099) // returned
			b.enter(0x7e00, helper, 0x2020)
			b.enter(0x7d00, leaf, 0x3030)
		}, leaf, 0, [][]uint64{{0x3030, 0x2020, 0x1010, 0x70}}},
		{"a tail call replaces its caller's frame", func(b *traceBuilder) {
			b.enter(0x8000, main, 0x70)
			b.enter(0x7f00, helper, 0x1010)
			b.enter(0x7f00, leaf, 0x1010) // helper jumped to leaf
		}, leaf, 0, [][]uint64{{0x1010, 0x70}}},
		{"tail calls are remembered by the function they reach", func(b *traceBuilder) {
			b.enter(0x8000, main, 0x70)
			b.enter(0x7f00, worker, 0x1010)
			b.enter(0x7f00, helper, 0x1010) // worker jumped to helper
			b.enter(0x7f00, leaf, 0x1010)   // helper jumped to leaf
		}, leaf, 0, [][]uint64{{0x1010, 0x70}}},
		{"a function called again from the same call site is no tail call", func(b *traceBuilder) {
			b.enter(0x8000, main, 0x70)
			b.enter(0x7f00, leaf, 0x1010)
			b.enter(0x7f00, leaf, 0x1010) // a loop in main calls leaf again
		}, leaf, 0, [][]uint64{{0x1010, 0x70}, {0x1010, 0x70}}},
		{"every activation is a candidate", func(b *traceBuilder) {
			b.enter(0x8000, main, 0x70)
			b.enter(0x7f00, leaf, 0x1010)
			b.enter(0x7f00, leaf, 0x1050)
		}, leaf, 0, [][]uint64{{0x1010, 0x70}, {0x1050, 0x70}}},
		{"the trace before a reset was another thread's", func(b *traceBuilder) {
			b.enter(0x8000, main, 0x70)
			b.enter(0x7f00, leaf, 0x1010)
			b.reset()
			b.enter(0x9000, worker, 0x99)
		}, leaf, 0, nil},
		{"a known segment: its entries and the frames live as it began", func(b *traceBuilder) {
			b.epoch(1, 4)
			b.enter(0x8000, worker, 0x70)
			b.enter(0x7f00, leaf, 0x1010) // segment 4
			b.enter(0x7f00, helper, 0x1020)
			b.epoch(1, 5)
			b.enter(0x7e00, leaf, 0x2030) // segment 5, called by helper
			b.epoch(1, 6)
			b.enter(0x7f00, leaf, 0x1040) // segment 6
		}, leaf, 5, [][]uint64{{0x2030, 0x1020, 0x70}}},
		{"a leaf still running as its segment began", func(b *traceBuilder) {
			b.epoch(1, 4)
			b.enter(0x8000, worker, 0x70)
			b.epoch(1, 5)
		}, worker, 5, [][]uint64{{0x70}}},
		{"another thread's epoch marks are not this one's", func(b *traceBuilder) {
			b.epoch(2, 5)
			b.enter(0x8000, worker, 0x70)
		}, worker, 5, nil},
		{"stack pointers wrap around 32 bits", func(b *traceBuilder) {
			b.enter(0x00000100, main, 0x70)
			b.enter(0xffffff00, leaf, 0x1010) // below main, across the wrap
		}, leaf, 0, [][]uint64{{0x1010, 0x70}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b traceBuilder
			tc.build(&b)
			// a ring is mostly unwritten: zero words are skipped
			words := append(make([]uint64, 8), b...)
			chains, _, _ := traceCallers(words, 1, tc.fn, tc.clock, func(from, to traceCall) bool {
				return from.fn == worker && to.fn == helper || from.fn == helper && to.fn == leaf
			})
			got := ras(chains)
			if !slices.EqualFunc(got, tc.want, slices.Equal) {
				t.Errorf("callers %x, want %x", got, tc.want)
			}
			want := [tailDepth]uint32{}
			switch tc.name {
			case "tail calls are remembered by the function they reach":
				want = [tailDepth]uint32{helper, worker}
			case "a tail call replaces its caller's frame":
				want = [tailDepth]uint32{helper}
			}
			for _, c := range chains {
				if c[0].tails != want {
					t.Errorf("tail callers %x, want %x", c[0].tails, want)
				}
			}
		})
	}
}
