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

// The C side joins a reader-log way's segment from the log's rlRefs,
// whose address the overflow's head gives (struct hg_over_head's refs;
// runtime/fastpath.c, hg_rlway_clock): three words a way, the clock
// snapshot, the first mutex, the more mutexes.
func TestRLRefLayout(t *testing.T) {
	var r rlRef
	if unsafe.Offsetof(r.vc) != 0 || unsafe.Offsetof(r.mutex) != 8 || unsafe.Offsetof(r.more) != 16 || unsafe.Sizeof(r) != 24 {
		t.Fatalf("rlRef: vc %d, mutex %d, more %d, %d bytes; HG_RLREF_WORDS is 3", unsafe.Offsetof(r.vc), unsafe.Offsetof(r.mutex), unsafe.Offsetof(r.more), unsafe.Sizeof(r))
	}
	var h overHead
	if unsafe.Offsetof(h.refs) != 24 || unsafe.Sizeof(h) > 64 {
		t.Fatalf("overHead: refs at %d of %d bytes; struct hg_over_head has it at 24, in a header of 64", unsafe.Offsetof(h.refs), unsafe.Sizeof(h))
	}
}
