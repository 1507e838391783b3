package detect

import (
	"testing"
	"unsafe"
)

// The C side reads a way's clock snapshot at the slot's segRefs + 8 i
// (runtime/rt_internal.h, struct hg_wslot's refs) and the refs' address
// at 120 bytes into the slot's meta.
func TestSegRefsLayout(t *testing.T) {
	var refs segRefs
	if unsafe.Offsetof(refs.ways) != 0 || unsafe.Sizeof(refs.ways[0]) != 8 {
		t.Fatalf("segRefs: ways at %d, %d bytes a way; the C side reads 0 and 8", unsafe.Offsetof(refs.ways), unsafe.Sizeof(refs.ways[0]))
	}
	var m slotMeta
	if unsafe.Offsetof(m.refs) != 120 || unsafe.Sizeof(m) != 128 {
		t.Fatalf("slotMeta: refs at %d of %d bytes; struct hg_wslot has 120 of 128", unsafe.Offsetof(m.refs), unsafe.Sizeof(m))
	}
}
