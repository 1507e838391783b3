package shadow

import (
	"testing"
	"unsafe"
)

// The runtime's C side reads a clock snapshot in place (runtime/hgrt.h,
// hg_tstate's snap; runtime/fastpath.c, hg_handoff_join): the address of
// its components in the VC's first word, their count in the second.
func TestVCLayout(t *testing.T) {
	v := NewVC(3)
	v.Set(1, 7)
	header := (*struct {
		c *[4]uint64
		n uintptr
	})(unsafe.Pointer(v))
	if header.n != 4 || header.c != (*[4]uint64)(unsafe.Pointer(&v.c[0])) {
		t.Fatalf("VC header %p %d: want the components' address and 4", header.c, header.n)
	}
	if header.c[1] != 7 || header.c[3] != 1 {
		t.Fatalf("components %v", *header.c)
	}
}
