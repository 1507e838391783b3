package detect

import (
	"debug/elf"
	"encoding/binary"
	"sort"
)

// functionStarts reads where the functions of f begin from the search
// table of its .eh_frame_hdr: every function with unwind information
// has an entry, stripped programs included, so that a report can still
// tell which function an address is in when the file has no symbols
// (reportstack.go). Nil when the section is missing or encoded otherwise
// than the usual way (a 4-byte count, 4-byte entries relative to the
// section).
func functionStarts(f *elf.File) []uint64 {
	sec := f.Section(".eh_frame_hdr")
	if sec == nil {
		return nil
	}
	data, ok := sectionData(sec)
	const (
		udata4        = 0x03
		sdata4        = 0x0b
		pcrelSdata4   = 0x1b
		datarelSdata4 = 0x3b
	)
	if !ok || len(data) < 12 || data[0] != 1 || data[2] != udata4 || data[3] != datarelSdata4 ||
		(data[1] != pcrelSdata4 && data[1] != sdata4) {
		return nil
	}
	n := int(binary.LittleEndian.Uint32(data[8:]))
	table := data[12:]
	if n < 0 || n > len(table)/8 {
		return nil
	}
	starts := make([]uint64, n)
	for i := range starts {
		rel := int32(binary.LittleEndian.Uint32(table[8*i:]))
		starts[i] = uint64(int64(sec.Addr) + int64(rel))
	}
	sort.Slice(starts, func(i, j int) bool { return starts[i] < starts[j] })
	return starts
}

// startOf is the greatest of the sorted starts at or below pc.
func startOf(starts []uint64, pc uint64) (uint64, bool) {
	i := sort.Search(len(starts), func(i int) bool { return starts[i] > pc }) - 1
	if i < 0 {
		return 0, false
	}
	return starts[i], true
}
