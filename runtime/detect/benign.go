package detect

import (
	"sort"
	"sync"
)

// benignRanges are the address ranges the program declared racy on
// purpose (AnnotateBenignRaceSized, Helgrind's VALGRIND_HG_DISABLE_CHECKING,
// DRD's start-suppression: runtime/annotations.c): a race on them is not
// reported. The ranges are kept sorted and disjoint; the report path
// consults them only when a race is found, so accesses pay nothing.
type benignRanges struct {
	mu     sync.Mutex
	ranges []addrRange // sorted by start, disjoint, none empty
}

// addrRange is the half-open range [start, end).
type addrRange struct{ start, end uint64 }

// BenignRange declares [addr, addr+size) racy on purpose when benign is
// set, and withdraws the declaration for those bytes otherwise (Helgrind's
// VALGRIND_HG_ENABLE_CHECKING). It holds for the rest of the run, whatever
// the memory is used for later, as in ThreadSanitizer.
func (d *Detector) BenignRange(addr, size uint64, benign bool) {
	end := addr + size
	if size == 0 || end < addr {
		return
	}
	d.benign.set(addrRange{addr, end}, benign)
}

// set adds r to the ranges (on) or takes it out of them.
func (b *benignRanges) set(r addrRange, on bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []addrRange
	for _, x := range b.ranges {
		switch {
		case x.end < r.start || x.start > r.end: // apart (and not adjacent)
			out = append(out, x)
		case on: // overlapping or adjacent: merged into r
			r = addrRange{min(r.start, x.start), max(r.end, x.end)}
		default: // the parts of x outside r stay
			if x.start < r.start {
				out = append(out, addrRange{x.start, r.start})
			}
			if x.end > r.end {
				out = append(out, addrRange{r.end, x.end})
			}
		}
	}
	if on {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].start < out[j].start })
	b.ranges = out
}

// covers reports whether an access to [addr, addr+size) touches a benign
// range (a race reported there is the declared one).
func (b *benignRanges) covers(addr, size uint64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	end := addr + max(size, 1)
	i := sort.Search(len(b.ranges), func(i int) bool { return b.ranges[i].end > addr })
	return i < len(b.ranges) && b.ranges[i].start < end
}
