package detect

import (
	"testing"
	"unsafe"
)

// The C side reads a way's clock snapshot at the slot's segRefs + 8 i
// (runtime/rt_internal.h, struct hg_wslot's refs), the ways' segMore
// pointers through the word at segRefs + 64, and the refs' address at
// 120 bytes into the slot's meta.
func TestSegRefsLayout(t *testing.T) {
	var refs segRefs
	if unsafe.Offsetof(refs.ways) != 0 || unsafe.Sizeof(refs.ways[0]) != 8 {
		t.Fatalf("segRefs: ways at %d, %d bytes a way; the C side reads 0 and 8", unsafe.Offsetof(refs.ways), unsafe.Sizeof(refs.ways[0]))
	}
	if unsafe.Offsetof(refs.more) != 64 || unsafe.Sizeof(*refs.more.Load()) != 8*segWays {
		t.Fatalf("segRefs: more at %d; the C side reads it at 64 (HG_SEGREFS_MORE), 8 bytes a way", unsafe.Offsetof(refs.more))
	}
	var m slotMeta
	if unsafe.Offsetof(m.refs) != 120 || unsafe.Sizeof(m) != 128 {
		t.Fatalf("slotMeta: refs at %d of %d bytes; struct hg_wslot has 120 of 128", unsafe.Offsetof(m.refs), unsafe.Sizeof(m))
	}
}
