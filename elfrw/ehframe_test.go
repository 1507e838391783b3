package elfrw

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// ---------------------------------------------------------------------------
// Byte-sequence builder for hand-made .eh_frame / LSDA data.

type ehTestBuf struct{ b []byte }

func (w *ehTestBuf) at() int                 { return len(w.b) }
func (w *ehTestBuf) u8(v ...byte)            { w.b = append(w.b, v...) }
func (w *ehTestBuf) u16(v uint16)            { w.b = binary.LittleEndian.AppendUint16(w.b, v) }
func (w *ehTestBuf) u32(v uint32)            { w.b = binary.LittleEndian.AppendUint32(w.b, v) }
func (w *ehTestBuf) u64(v uint64)            { w.b = binary.LittleEndian.AppendUint64(w.b, v) }
func (w *ehTestBuf) str(s string)            { w.b = append(append(w.b, s...), 0) }
func (w *ehTestBuf) addr(base uint64) uint64 { return base + uint64(len(w.b)) }

func (w *ehTestBuf) uleb(v uint64) {
	for {
		b := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			w.b = append(w.b, b|0x80)
			continue
		}
		w.b = append(w.b, b)
		return
	}
}

func (w *ehTestBuf) sleb(v int64) {
	for {
		b := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && b&0x40 == 0) || (v == -1 && b&0x40 != 0) {
			w.b = append(w.b, b)
			return
		}
		w.b = append(w.b, b|0x80)
	}
}

// begin starts a record with a 32-bit length placeholder.
func (w *ehTestBuf) begin() int {
	off := w.at()
	w.u32(0)
	return off
}

// finish pads the record to 4 bytes with DW_CFA_nop and patches its length.
func (w *ehTestBuf) finish(off int) {
	for (w.at()-off)%4 != 0 {
		w.u8(0)
	}
	binary.LittleEndian.PutUint32(w.b[off:], uint32(w.at()-off-4))
}

// begin64 starts a record with a 64-bit DWARF length placeholder.
func (w *ehTestBuf) begin64() int {
	off := w.at()
	w.u32(0xffffffff)
	w.u64(0)
	return off
}

func (w *ehTestBuf) finish64(off int) {
	for (w.at()-off)%4 != 0 {
		w.u8(0)
	}
	binary.LittleEndian.PutUint64(w.b[off+4:], uint64(w.at()-off-12))
}

// cie writes a version-1 CIE; augData writes the 'z' augmentation data.
func (w *ehTestBuf) cie(aug string, augData func(w *ehTestBuf)) int {
	off := w.begin()
	w.u32(0) // CIE id
	w.u8(1)  // version
	w.str(aug)
	w.uleb(1)  // code alignment
	w.sleb(-8) // data alignment
	w.u8(16)   // return address register
	if strings.HasPrefix(aug, "z") {
		var a ehTestBuf
		if augData != nil {
			augData(&a)
		}
		w.uleb(uint64(len(a.b)))
		w.u8(a.b...)
	}
	w.u8(0x0c, 7, 8) // DW_CFA_def_cfa rsp+8
	w.finish(off)
	return off
}

// fde writes an FDE for the CIE at cieOff; body writes everything after the
// CIE pointer.
func (w *ehTestBuf) fde(cieOff int, body func(w *ehTestBuf)) int {
	off := w.begin()
	w.u32(uint32(w.at() - cieOff))
	body(w)
	w.finish(off)
	return off
}

// put writes v in the value format of enc (low nibble; aligned => absptr).
func (w *ehTestBuf) put(enc byte, v uint64) {
	format := enc & 0x0f
	if enc&0x70 == ehPEAligned {
		format = ehPEAbsptr
	}
	switch format {
	case ehPEAbsptr, ehPESigned, ehPEUdata8, ehPESdata8:
		w.u64(v)
	case ehPEUleb128:
		w.uleb(v)
	case ehPESleb128:
		w.sleb(int64(v))
	case ehPEUdata2, ehPESdata2:
		w.u16(uint16(v))
	case ehPEUdata4, ehPESdata4:
		w.u32(uint32(v))
	default:
		panic(fmt.Sprintf("ehTestBuf.put: format %#x", format))
	}
}

// ptr writes target with the full encoding enc (pcrel and aligned applied),
// as if the buffer were loaded at base.
func (w *ehTestBuf) ptr(enc byte, base, target uint64) {
	switch enc & 0x70 {
	case ehPEPcrel:
		w.put(enc, target-w.addr(base))
	case ehPEAligned:
		for w.addr(base)%8 != 0 {
			w.u8(0)
		}
		w.put(enc, target)
	default:
		w.put(enc, target)
	}
}

// ---------------------------------------------------------------------------
// Hand-built .eh_frame tests.

func TestEHFramePointerEncodings(t *testing.T) {
	const secAddr = 0x20000
	cases := []struct {
		name        string
		enc         byte
		start, size uint64
	}{
		{"absptr", 0x00, 0x401000, 0x20},
		{"uleb128", 0x01, 0x401000, 0x30},
		{"udata2", 0x02, 0x1234, 0x10},
		{"udata4", 0x03, 0x401000, 0x40},
		{"udata8", 0x04, 0x7fff00401000, 0x50},
		{"signed absptr", 0x08, 0x401000, 0x10},
		{"sleb128", 0x09, 0x401000, 0x60},
		{"sleb128 large", 0x09, 0x7fff00401000, 0x200},
		{"sdata2", 0x0a, 0x7000, 0x10},
		{"sdata2 negative", 0x0a, 0xffffffffffff8000, 0x10},
		{"sdata4", 0x0b, 0x401000, 0x70},
		{"sdata4 negative", 0x0b, 0xffffffff80001000, 0x70},
		{"sdata8", 0x0c, 0x401000, 0x80},
		{"pcrel|absptr", 0x10, secAddr + 0x1000, 0x18},
		{"pcrel|uleb128", 0x11, secAddr + 0x5000, 0x18},
		{"pcrel|udata2", 0x12, secAddr + 0x100, 0x18},
		{"pcrel|udata4", 0x13, secAddr + 0x10000, 0x18},
		{"pcrel|udata8", 0x14, secAddr - 0x3000, 0x18},
		{"pcrel|sleb128", 0x19, secAddr - 0x2000, 0x18},
		{"pcrel|sdata2", 0x1a, secAddr - 0x100, 0x18},
		{"pcrel|sdata4", 0x1b, secAddr - 0x8000, 0x18},
		{"pcrel|sdata4 forward", 0x1b, secAddr + 0x8000, 0x18},
		{"pcrel|sdata8", 0x1c, secAddr - 0x9000, 0x18},
		{"aligned", 0x50, 0x401000, 0x28},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var w ehTestBuf
			cie := w.cie("zLR", func(a *ehTestBuf) { a.u8(tc.enc, tc.enc) })
			lsda := tc.start + 2
			w.fde(cie, func(w *ehTestBuf) {
				w.ptr(tc.enc, secAddr, tc.start)
				w.put(tc.enc, tc.size)
				lenAt := w.at()
				w.u8(0) // augmentation length, patched below (< 128)
				w.ptr(tc.enc, secAddr, lsda)
				w.b[lenAt] = byte(w.at() - lenAt - 1)
			})
			w.u32(0) // terminator
			got, err := ParseEHFrame(w.b, secAddr)
			if err != nil {
				t.Fatalf("ParseEHFrame: %v", err)
			}
			want := []FDE{{Start: tc.start, End: tc.start + tc.size, LSDA: lsda}}
			if !slices.Equal(got, want) {
				t.Fatalf("got %+v, want %+v", got, want)
			}
		})
	}
}

func TestEHFrameUnsupportedEncodings(t *testing.T) {
	const secAddr = 0x1000
	for _, enc := range []byte{0x2b, 0x3b, 0x4b, 0x9b, 0x05, 0x0d, 0x6b, 0xff} {
		t.Run(fmt.Sprintf("%#x", enc), func(t *testing.T) {
			var w ehTestBuf
			bad := w.cie("zR", func(a *ehTestBuf) { a.u8(enc) })
			w.fde(bad, func(w *ehTestBuf) {
				w.u32(0x100)
				w.u32(0x10)
				w.uleb(0)
			})
			good := w.cie("zR", func(a *ehTestBuf) { a.u8(0x03) })
			w.fde(good, func(w *ehTestBuf) {
				w.u32(0x500)
				w.u32(0x40)
				w.uleb(0)
			})
			got, err := ParseEHFrame(w.b, secAddr)
			if err == nil {
				t.Fatalf("expected an error for encoding %#x", enc)
			}
			want := []FDE{{Start: 0x500, End: 0x540}}
			if !slices.Equal(got, want) {
				t.Fatalf("got %+v, want %+v (err %v)", got, want, err)
			}
		})
	}
}

func TestEHFrameAugmentations(t *testing.T) {
	const secAddr = 0x3000
	type fdeSpec struct {
		start, size uint64
		lsda        uint64
		augData     []byte // written raw after the LSDA (if any) in the FDE augmentation
	}
	cases := []struct {
		name    string
		aug     string
		augData func(w *ehTestBuf)
		hasL    bool
		fdeEnc  byte
		wantErr bool
		want    []FDE
	}{
		{
			name: "zPLR personality indirect",
			aug:  "zPLR",
			augData: func(a *ehTestBuf) {
				a.u8(0x9b) // indirect|pcrel|sdata4
				a.u32(0x1234)
				a.u8(0x1b, 0x1b)
			},
			hasL: true, fdeEnc: 0x1b,
			want: []FDE{{Start: 0x10000, End: 0x10040, LSDA: 0x40000}},
		},
		{
			name: "zPLR personality udata8",
			aug:  "zPLR",
			augData: func(a *ehTestBuf) {
				a.u8(0x04)
				a.u64(0x123456789)
				a.u8(0x03, 0x03)
			},
			hasL: true, fdeEnc: 0x03,
			want: []FDE{{Start: 0x10000, End: 0x10040, LSDA: 0x40000}},
		},
		{
			name: "zPLR personality aligned",
			aug:  "zPLR",
			augData: func(a *ehTestBuf) {
				a.u8(0x50)
				// The aug data starts at CIE offset 4+4+1+5+1+1+1+1 = 18
				// (secAddr aligned), personality field at 19 -> pad to 24.
				a.u8(0, 0, 0, 0, 0)
				a.u64(0x123456789)
				a.u8(0x03, 0x03)
			},
			hasL: true, fdeEnc: 0x03,
			want: []FDE{{Start: 0x10000, End: 0x10040, LSDA: 0x40000}},
		},
		{
			name:    "zRS signal frame",
			aug:     "zRS",
			augData: func(a *ehTestBuf) { a.u8(0x03) },
			fdeEnc:  0x03,
			want:    []FDE{{Start: 0x10000, End: 0x10040}},
		},
		{
			name:    "zRB aarch64 BTI",
			aug:     "zRB",
			augData: func(a *ehTestBuf) { a.u8(0x03) },
			fdeEnc:  0x03,
			want:    []FDE{{Start: 0x10000, End: 0x10040}},
		},
		{
			name:    "zRX unknown letter skipped via length",
			aug:     "zRX",
			augData: func(a *ehTestBuf) { a.u8(0x03, 0xaa, 0xbb, 0xcc) },
			fdeEnc:  0x03,
			want:    []FDE{{Start: 0x10000, End: 0x10040}},
		},
		{
			name:    "zLRQ unknown letter after L and R",
			aug:     "zLRQ",
			augData: func(a *ehTestBuf) { a.u8(0x03, 0x03, 0x99) },
			hasL:    true, fdeEnc: 0x03,
			want: []FDE{{Start: 0x10000, End: 0x10040, LSDA: 0x40000}},
		},
		{
			name:    "zXR unknown letter before R",
			aug:     "zXR",
			augData: func(a *ehTestBuf) { a.u8(0x11, 0x03) },
			fdeEnc:  0x03,
			wantErr: true,
		},
		{
			name:    "zRXL unknown letter before L keeps range",
			aug:     "zRXL",
			augData: func(a *ehTestBuf) { a.u8(0x03, 0x11, 0x03) },
			hasL:    true, fdeEnc: 0x03,
			wantErr: true,
			want:    []FDE{{Start: 0x10000, End: 0x10040}},
		},
		{
			name:   "no augmentation",
			aug:    "",
			fdeEnc: 0x00,
			want:   []FDE{{Start: 0x10000, End: 0x10040}},
		},
		{
			name:    "L with omit encoding",
			aug:     "zLR",
			augData: func(a *ehTestBuf) { a.u8(0xff, 0x03) },
			fdeEnc:  0x03,
			want:    []FDE{{Start: 0x10000, End: 0x10040}},
		},
		{
			name:    "zLR with null LSDA",
			aug:     "zLR",
			augData: func(a *ehTestBuf) { a.u8(0x1b, 0x1b) },
			hasL:    true, fdeEnc: 0x1b,
			want: []FDE{{Start: 0x10000, End: 0x10040, LSDA: 0}},
		},
		{
			name:    "indirect LSDA unsupported keeps range",
			aug:     "zLR",
			augData: func(a *ehTestBuf) { a.u8(0x9b, 0x1b) },
			hasL:    true, fdeEnc: 0x1b,
			wantErr: true,
			want:    []FDE{{Start: 0x10000, End: 0x10040}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var w ehTestBuf
			cie := w.cie(tc.aug, tc.augData)
			var lsda uint64
			if len(tc.want) > 0 {
				lsda = tc.want[0].LSDA
			}
			w.fde(cie, func(w *ehTestBuf) {
				w.ptr(tc.fdeEnc, secAddr, 0x10000)
				w.put(tc.fdeEnc, 0x40)
				if strings.HasPrefix(tc.aug, "z") {
					if tc.hasL {
						w.uleb(4)
						enc := byte(0x1b)
						if tc.fdeEnc == 0x03 {
							enc = 0x03
						}
						if lsda == 0 {
							w.u32(0) // null LSDA: raw zero, no base applied
						} else {
							w.ptr(enc, secAddr, lsda)
						}
					} else {
						w.uleb(0)
					}
				}
			})
			got, err := ParseEHFrame(w.b, secAddr)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestEHFrameCIEVersionsAndLegacy(t *testing.T) {
	const secAddr = 0x4000
	// Version 3 CIE: return address register is ULEB128 (here 2 bytes).
	var w ehTestBuf
	off := w.begin()
	w.u32(0)
	w.u8(3)
	w.str("zR")
	w.uleb(1)
	w.sleb(-8)
	w.uleb(300)
	w.uleb(1)
	w.u8(0x03)
	w.finish(off)
	w.fde(off, func(w *ehTestBuf) { w.u32(0x1000); w.u32(0x10); w.uleb(0) })

	// Version 4 CIE with address size 8 and segment size 0.
	off = w.begin()
	w.u32(0)
	w.u8(4)
	w.str("zR")
	w.u8(8, 0)
	w.uleb(1)
	w.sleb(-8)
	w.uleb(16)
	w.uleb(1)
	w.u8(0x00)
	w.finish(off)
	w.fde(off, func(w *ehTestBuf) { w.u64(0x2000); w.u64(0x20); w.uleb(0) })

	// Legacy "eh" augmentation: a pointer-sized EH data field follows.
	off = w.begin()
	w.u32(0)
	w.u8(1)
	w.str("eh")
	w.u64(0xdeadbeef)
	w.uleb(1)
	w.sleb(-8)
	w.u8(16)
	w.finish(off)
	w.fde(off, func(w *ehTestBuf) { w.u64(0x3000); w.u64(0x30) })

	// Unsupported version 2: error, but parsing continues.
	off = w.begin()
	w.u32(0)
	w.u8(2)
	w.str("")
	w.finish(off)
	w.fde(off, func(w *ehTestBuf) { w.u64(0x9000); w.u64(0x30) })

	got, err := ParseEHFrame(w.b, secAddr)
	if err == nil || !strings.Contains(err.Error(), "version 2") {
		t.Fatalf("expected a version error, got %v", err)
	}
	want := []FDE{{0x1000, 0x1010, 0}, {0x2000, 0x2020, 0}, {0x3000, 0x3030, 0}}
	if !slices.Equal(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

func TestEHFrame64BitLength(t *testing.T) {
	const secAddr = 0x5000
	var w ehTestBuf
	cie := w.begin64()
	w.u64(0) // 64-bit CIE id
	w.u8(1)
	w.str("zR")
	w.uleb(1)
	w.sleb(-8)
	w.u8(16)
	w.uleb(1)
	w.u8(0x1b)
	w.finish64(cie)

	fde := w.begin64()
	w.u64(uint64(w.at() - cie)) // 64-bit CIE pointer
	w.ptr(0x1b, secAddr, 0x7000)
	w.u32(0x44)
	w.uleb(0)
	w.finish64(fde)

	// A normal 32-bit FDE may reference the 64-bit CIE too.
	w.fde(cie, func(w *ehTestBuf) {
		w.ptr(0x1b, secAddr, 0x8000)
		w.u32(0x10)
		w.uleb(0)
	})
	w.u32(0)

	got, err := ParseEHFrame(w.b, secAddr)
	if err != nil {
		t.Fatalf("ParseEHFrame: %v", err)
	}
	want := []FDE{{0x7000, 0x7044, 0}, {0x8000, 0x8010, 0}}
	if !slices.Equal(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

func TestEHFrameTerminatorAndCorruption(t *testing.T) {
	const secAddr = 0x6000
	var w ehTestBuf
	cie := w.cie("zR", func(a *ehTestBuf) { a.u8(0x1b) })
	w.fde(cie, func(w *ehTestBuf) { w.ptr(0x1b, secAddr, 0x100); w.u32(0x10); w.uleb(0) })
	w.u32(0) // zero terminator in the middle: parsing continues
	w.fde(cie, func(w *ehTestBuf) { w.ptr(0x1b, secAddr, 0x200); w.u32(0x20); w.uleb(0) })
	// Discarded function: initial location 0 is skipped without error.
	w.fde(cie, func(w *ehTestBuf) { w.u32(0); w.u32(0x20); w.uleb(0) })
	w.u32(0)
	full := slices.Clone(w.b)
	want := []FDE{{0x100, 0x110, 0}, {0x200, 0x220, 0}}

	got, err := ParseEHFrame(full, secAddr)
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("got %+v, %v; want %+v", got, err, want)
	}

	if got, err := ParseEHFrame(nil, secAddr); got != nil || err != nil {
		t.Fatalf("empty section: got %+v, %v", got, err)
	}

	// Every truncation must return a prefix of the full result, never panic.
	for n := 0; n < len(full); n++ {
		got, _ := ParseEHFrame(full[:n], secAddr)
		if len(got) > len(want) || !slices.Equal(got, want[:len(got)]) {
			t.Fatalf("truncated to %d: got %+v", n, got)
		}
	}

	// A bad CIE pointer is an error for that FDE only.
	var b ehTestBuf
	cie = b.cie("zR", func(a *ehTestBuf) { a.u8(0x03) })
	first := b.fde(cie, func(w *ehTestBuf) { w.u32(0x100); w.u32(0x10); w.uleb(0) })
	bad := b.begin()
	b.u32(0x7fff0000) // points far before the section
	b.u32(0x100)
	b.u32(0x10)
	b.finish(bad)
	bad = b.begin()
	b.u32(uint32(b.at() - first)) // points at an FDE, not at a CIE
	b.u32(0x100)
	b.u32(0x10)
	b.finish(bad)
	bad = b.begin()
	b.u32(uint32(b.at() - 4)) // points into the middle of the CIE
	b.u32(0x100)
	b.u32(0x10)
	b.finish(bad)
	b.fde(cie, func(w *ehTestBuf) { w.u32(0x300); w.u32(0x10); w.uleb(0) })
	// Length beyond the end of the section.
	b.u32(0x1000)
	b.u32(0)
	got, err = ParseEHFrame(b.b, secAddr)
	if err == nil {
		t.Fatal("expected errors")
	}
	want = []FDE{{0x100, 0x110, 0}, {0x300, 0x310, 0}}
	if !slices.Equal(got, want) {
		t.Fatalf("got %+v, want %+v (err %v)", got, want, err)
	}

	// Range overflow.
	var o ehTestBuf
	cie = o.cie("", nil)
	o.fde(cie, func(w *ehTestBuf) { w.u64(0xfffffffffffffff0); w.u64(0x20) })
	if got, err := ParseEHFrame(o.b, secAddr); err == nil || len(got) != 0 {
		t.Fatalf("overflow: got %+v, %v", got, err)
	}
}

// ---------------------------------------------------------------------------
// Hand-built LSDA tests.

type ehTestCallSite struct{ start, length, lp, action uint64 }

// lsda writes an LSDA; lpStart is written with lpEnc unless it is omit.
func (w *ehTestBuf) lsda(base uint64, lpEnc byte, lpStart uint64, ttEnc byte, csEnc byte, sites []ehTestCallSite) {
	w.u8(lpEnc)
	if lpEnc != ehPEOmit {
		w.ptr(lpEnc, base, lpStart)
	}
	w.u8(ttEnc)
	if ttEnc != ehPEOmit {
		w.uleb(0x90) // TType offset (two-byte ULEB128)
	}
	w.u8(csEnc)
	var cs ehTestBuf
	for _, s := range sites {
		cs.put(csEnc, s.start)
		cs.put(csEnc, s.length)
		cs.put(csEnc, s.lp)
		cs.uleb(s.action)
	}
	w.uleb(uint64(len(cs.b)))
	w.u8(cs.b...)
	// Action table and type table follow; they are not needed.
	w.u8(1, 0, 0, 0, 0, 0)
}

func TestLandingPadsEncodings(t *testing.T) {
	const (
		secAddr   = 0x2000
		funcStart = 0x401000
	)
	sites := []ehTestCallSite{
		{0x0, 0x5, 0x40, 1},
		{0x5, 0x7, 0x0, 0}, // no landing pad
		{0xc, 0x4, 0x20, 0},
		{0x10, 0x3, 0x40, 1}, // duplicate landing pad
		{0x13, 0x3, 0x8, 3},
	}
	wantRel := []uint64{0x8, 0x20, 0x40}
	cases := []struct {
		name    string
		lpEnc   byte
		lpStart uint64
		ttEnc   byte
		csEnc   byte
		base    uint64 // expected LPStart
	}{
		{"uleb128", 0xff, 0, 0xff, 0x01, funcStart},
		{"udata4 with TType", 0xff, 0, 0x9b, 0x03, funcStart},
		{"sdata4", 0xff, 0, 0x03, 0x0b, funcStart},
		{"udata2", 0xff, 0, 0xff, 0x02, funcStart},
		{"udata8", 0xff, 0, 0xff, 0x04, funcStart},
		{"sdata2", 0xff, 0, 0xff, 0x0a, funcStart},
		{"sdata8", 0xff, 0, 0xff, 0x0c, funcStart},
		{"sleb128", 0xff, 0, 0xff, 0x09, funcStart},
		{"absptr", 0xff, 0, 0xff, 0x00, funcStart},
		{"LPStart absptr", 0x00, 0x500000, 0xff, 0x01, 0x500000},
		{"LPStart udata4", 0x03, 0x600000, 0x9b, 0x03, 0x600000},
		{"LPStart pcrel sdata4", 0x1b, 0x700000, 0x9b, 0x01, 0x700000},
		{"LPStart funcrel", 0x43, funcStart + 0x100, 0xff, 0x01, funcStart + 0x100},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var w ehTestBuf
			w.u8(0xaa, 0xbb, 0xcc) // LSDA does not start at the section start
			lsdaAddr := w.addr(secAddr)
			lpStart := tc.lpStart
			if tc.lpEnc&0x70 == ehPEFuncrel {
				lpStart -= funcStart
			}
			w.lsda(secAddr, tc.lpEnc, lpStart, tc.ttEnc, tc.csEnc, sites)
			got, err := LandingPads(w.b, secAddr, lsdaAddr, funcStart)
			if err != nil {
				t.Fatalf("LandingPads: %v", err)
			}
			var want []uint64
			for _, r := range wantRel {
				want = append(want, tc.base+r)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("got %#x, want %#x", got, want)
			}
		})
	}
}

func TestLandingPadsErrors(t *testing.T) {
	const (
		secAddr   = 0x2000
		funcStart = 0x401000
	)
	sites := []ehTestCallSite{{0, 4, 0x10, 0}, {4, 4, 0x30, 0}}
	var good ehTestBuf
	good.lsda(secAddr, 0xff, 0, 0xff, 0x01, sites)

	// Address outside the section.
	for _, a := range []uint64{0, secAddr - 1, secAddr + uint64(len(good.b)), ^uint64(0)} {
		if _, err := LandingPads(good.b, secAddr, a, funcStart); err == nil {
			t.Errorf("lsdaAddr %#x: expected error", a)
		}
	}
	// Omitted or unsupported call-site encodings.
	for _, enc := range []byte{0xff, 0x2b, 0x3b, 0x83, 0x07} {
		var w ehTestBuf
		w.u8(0xff, 0xff, enc)
		w.uleb(8)
		w.u8(1, 2, 3, 4, 5, 6, 7, 8)
		if _, err := LandingPads(w.b, secAddr, secAddr, funcStart); err == nil {
			t.Errorf("call-site encoding %#x: expected error", enc)
		}
	}
	// Table length beyond the section.
	var w ehTestBuf
	w.u8(0xff, 0xff, 0x01)
	w.uleb(100)
	w.u8(0, 4, 0x10, 0)
	if got, err := LandingPads(w.b, secAddr, secAddr, funcStart); err == nil || got != nil {
		t.Errorf("long table: got %#x, %v", got, err)
	}
	// Table ending in the middle of an entry: pads found so far are returned.
	w = ehTestBuf{}
	w.u8(0xff, 0xff, 0x01)
	w.uleb(6)
	w.u8(0, 4, 0x10, 0) // complete entry
	w.u8(4, 4)          // partial entry
	got, err := LandingPads(w.b, secAddr, secAddr, funcStart)
	if err == nil || !slices.Equal(got, []uint64{funcStart + 0x10}) {
		t.Errorf("partial entry: got %#x, %v", got, err)
	}
	// Every truncation: no panic, result is a subset of the full one.
	full, err := LandingPads(good.b, secAddr, secAddr, funcStart)
	if err != nil || len(full) != 2 {
		t.Fatalf("full: %#x, %v", full, err)
	}
	for n := 1; n < len(good.b); n++ {
		got, _ := LandingPads(good.b[:n], secAddr, secAddr, funcStart)
		for _, p := range got {
			if !slices.Contains(full, p) {
				t.Fatalf("truncated to %d: unexpected pad %#x", n, p)
			}
		}
	}
}

// ---------------------------------------------------------------------------
// Tests against real g++ output.

const ehTestProgram = `
#include <cstdio>
#include <stdexcept>
#include <string>

struct EhGuard {
	const char *name;
	explicit EhGuard(const char *n) : name(n) {}
	~EhGuard() { std::puts(name); }
};

extern "C" __attribute__((noinline)) int eh_thrower(int x) {
	if (x > 100) throw std::runtime_error("big");
	if (x < -100) throw 42;
	return x * 2;
}

extern "C" __attribute__((noinline)) int eh_catcher(int x) {
	EhGuard g("leaving eh_catcher");
	try {
		return eh_thrower(x) + eh_thrower(x + 1);
	} catch (const std::runtime_error &e) {
		std::puts(e.what());
		return -1;
	} catch (int v) {
		return v;
	} catch (...) {
		return -2;
	}
}

int main(int argc, char **argv) {
	std::string s(argv[0]);
	return eh_catcher(argc * 1000) + eh_catcher(argc) + (int)s.size();
}
`

func ehTestCompile(tb testing.TB, dir string, flags ...string) string {
	tb.Helper()
	src := filepath.Join(dir, "eh.cc")
	if err := os.WriteFile(src, []byte(ehTestProgram), 0o644); err != nil {
		tb.Fatal(err)
	}
	bin := filepath.Join(dir, "eh.bin")
	args := append(slices.Clone(flags), "-o", bin, src)
	if out, err := exec.Command("g++", args...).CombinedOutput(); err != nil {
		tb.Fatalf("g++ %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return bin
}

var ehTestReadelfPC = regexp.MustCompile(`\bFDE\b.*\bpc=([0-9a-fA-F]+)\.\.([0-9a-fA-F]+)`)

// ehTestReadelfFDEs returns the FDE ranges listed by readelf.
func ehTestReadelfFDEs(t *testing.T, bin string) []FDE {
	t.Helper()
	out, err := exec.Command("readelf", "--debug-dump=frames", bin).Output()
	if err != nil {
		t.Fatalf("readelf: %v", err)
	}
	var fdes []FDE
	for _, line := range strings.Split(string(out), "\n") {
		m := ehTestReadelfPC.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		s, err1 := strconv.ParseUint(m[1], 16, 64)
		e, err2 := strconv.ParseUint(m[2], 16, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("cannot parse readelf line %q", line)
		}
		fdes = append(fdes, FDE{Start: s, End: e})
	}
	return fdes
}

func TestEHFrameRealBinaries(t *testing.T) {
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skip("g++ not found in PATH; skipping tests against compiled C++ binaries")
	}
	_, readelfErr := exec.LookPath("readelf")
	configs := []struct {
		name  string
		flags []string
	}{
		{"O0-pie", []string{"-O0", "-fPIE", "-pie"}},
		{"O2-pie", []string{"-O2", "-fPIE", "-pie"}},
		{"O0-nopie", []string{"-O0", "-fno-pie", "-no-pie"}},
		{"O2-nopie", []string{"-O2", "-fno-pie", "-no-pie"}},
	}
	for _, cfg := range configs {
		t.Run(cfg.name, func(t *testing.T) {
			bin := ehTestCompile(t, t.TempDir(), cfg.flags...)
			f, err := elf.Open(bin)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			ehSec := f.Section(".eh_frame")
			if ehSec == nil {
				t.Fatal("no .eh_frame section")
			}
			ehData, err := ehSec.Data()
			if err != nil {
				t.Fatal(err)
			}
			fdes, err := ParseEHFrame(ehData, ehSec.Addr)
			if err != nil {
				t.Fatalf("ParseEHFrame: %v", err)
			}
			if len(fdes) == 0 {
				t.Fatal("no FDEs")
			}
			syms, err := f.Symbols()
			if err != nil {
				t.Fatal(err)
			}
			symbol := func(name string) elf.Symbol {
				for _, s := range syms {
					if s.Name == name && elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Value != 0 {
						return s
					}
				}
				t.Fatalf("symbol %s not found", name)
				return elf.Symbol{}
			}
			fdeAt := func(addr uint64) (FDE, bool) {
				for _, fd := range fdes {
					if fd.Start == addr {
						return fd, true
					}
				}
				return FDE{}, false
			}

			// (a) main's FDE matches its symbol.
			mainSym := symbol("main")
			mainFDE, ok := fdeAt(mainSym.Value)
			if !ok {
				t.Fatalf("no FDE starts at main (%#x)", mainSym.Value)
			}
			if mainFDE.End != mainSym.Value+mainSym.Size {
				t.Fatalf("main FDE %#x..%#x, symbol %#x+%#x", mainFDE.Start, mainFDE.End, mainSym.Value, mainSym.Size)
			}

			// (b) landing pads of the try/catch function, and of every FDE
			// with an LSDA, lie inside the FDE's range.
			gccSec := f.Section(".gcc_except_table")
			if gccSec == nil {
				t.Fatal("no .gcc_except_table section")
			}
			gccData, err := gccSec.Data()
			if err != nil {
				t.Fatal(err)
			}
			catcher := symbol("eh_catcher")
			catcherFDE, ok := fdeAt(catcher.Value)
			if !ok {
				t.Fatalf("no FDE starts at eh_catcher (%#x)", catcher.Value)
			}
			if catcherFDE.LSDA == 0 {
				t.Fatal("eh_catcher FDE has no LSDA")
			}
			pads, err := LandingPads(gccData, gccSec.Addr, catcherFDE.LSDA, catcherFDE.Start)
			if err != nil {
				t.Fatalf("LandingPads(eh_catcher): %v", err)
			}
			if len(pads) == 0 {
				t.Fatal("eh_catcher has no landing pads")
			}
			withLSDA := 0
			for _, fd := range fdes {
				if fd.LSDA == 0 {
					continue
				}
				withLSDA++
				pads, err := LandingPads(gccData, gccSec.Addr, fd.LSDA, fd.Start)
				if err != nil {
					t.Errorf("LandingPads(FDE %#x..%#x, LSDA %#x): %v", fd.Start, fd.End, fd.LSDA, err)
				}
				for _, p := range pads {
					if p < fd.Start || p >= fd.End {
						t.Errorf("landing pad %#x outside FDE %#x..%#x", p, fd.Start, fd.End)
					}
				}
				t.Logf("FDE %#x..%#x LSDA %#x pads %#x", fd.Start, fd.End, fd.LSDA, pads)
			}
			if withLSDA == 0 {
				t.Error("no FDE has an LSDA")
			}

			// Cross-check against readelf.
			if readelfErr != nil {
				t.Log("readelf not found; skipping cross-check")
				return
			}
			ref := ehTestReadelfFDEs(t, bin)
			if len(ref) == 0 {
				t.Fatal("readelf listed no FDEs")
			}
			type rng struct{ s, e uint64 }
			have := map[rng]bool{}
			for _, fd := range fdes {
				have[rng{fd.Start, fd.End}] = true
			}
			refSet := map[rng]bool{}
			for _, fd := range ref {
				refSet[rng{fd.Start, fd.End}] = true
				if !have[rng{fd.Start, fd.End}] {
					t.Errorf("readelf FDE %#x..%#x missing from ParseEHFrame result", fd.Start, fd.End)
				}
			}
			for _, fd := range fdes {
				if !refSet[rng{fd.Start, fd.End}] {
					t.Errorf("FDE %#x..%#x not listed by readelf", fd.Start, fd.End)
				}
			}
		})
	}
}

// ---------------------------------------------------------------------------
// Fuzzing.

type ehTestSeed struct {
	ehFrame, except         []byte
	ehFrameAddr, exceptAddr uint64
	lsdas                   [][2]uint64 // {LSDA address, function start}
}

var (
	ehTestSeedOnce sync.Once
	ehTestSeedVal  *ehTestSeed
)

// ehTestRealSeed compiles the test program once per process and returns its
// exception-handling sections, or nil if that is not possible.
func ehTestRealSeed() *ehTestSeed {
	ehTestSeedOnce.Do(func() {
		if _, err := exec.LookPath("g++"); err != nil {
			return
		}
		dir, err := os.MkdirTemp("", "ehfuzz")
		if err != nil {
			return
		}
		defer os.RemoveAll(dir)
		bin := filepath.Join(dir, "eh.bin")
		src := filepath.Join(dir, "eh.cc")
		if os.WriteFile(src, []byte(ehTestProgram), 0o644) != nil {
			return
		}
		if exec.Command("g++", "-O2", "-o", bin, src).Run() != nil {
			return
		}
		f, err := elf.Open(bin)
		if err != nil {
			return
		}
		defer f.Close()
		eh, gx := f.Section(".eh_frame"), f.Section(".gcc_except_table")
		if eh == nil || gx == nil {
			return
		}
		s := &ehTestSeed{ehFrameAddr: eh.Addr, exceptAddr: gx.Addr}
		if s.ehFrame, err = eh.Data(); err != nil {
			return
		}
		if s.except, err = gx.Data(); err != nil {
			return
		}
		fdes, _ := ParseEHFrame(s.ehFrame, s.ehFrameAddr)
		for _, fd := range fdes {
			if fd.LSDA != 0 {
				s.lsdas = append(s.lsdas, [2]uint64{fd.LSDA, fd.Start})
			}
		}
		ehTestSeedVal = s
	})
	return ehTestSeedVal
}

func FuzzParseEHFrame(f *testing.F) {
	if s := ehTestRealSeed(); s != nil {
		f.Add(s.ehFrame, s.ehFrameAddr)
	}
	var w ehTestBuf
	cie := w.cie("zPLR", func(a *ehTestBuf) { a.u8(0x9b); a.u32(0x100); a.u8(0x1b, 0x1b) })
	w.fde(cie, func(w *ehTestBuf) { w.u32(0x100); w.u32(0x20); w.uleb(4); w.u32(0x40) })
	w.u32(0)
	c64 := w.begin64()
	w.u64(0)
	w.u8(1)
	w.str("zR")
	w.u8(1, 0x78, 16, 1, 0x03)
	w.finish64(c64)
	f.Add(w.b, uint64(0x1000))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 1, 0, 0, 0, 0, 0, 0, 0}, uint64(0))
	f.Fuzz(func(t *testing.T, data []byte, secAddr uint64) {
		fdes, _ := ParseEHFrame(data, secAddr)
		for _, fd := range fdes {
			if fd.End < fd.Start {
				t.Fatalf("FDE with End < Start: %+v", fd)
			}
			// Exercise the LSDA parser on the same bytes as well.
			_, _ = LandingPads(data, secAddr, fd.LSDA, fd.Start)
		}
	})
}

func FuzzLandingPads(f *testing.F) {
	if s := ehTestRealSeed(); s != nil {
		for _, l := range s.lsdas {
			f.Add(s.except, s.exceptAddr, uint32(l[0]-s.exceptAddr), l[1])
		}
	}
	var w ehTestBuf
	w.lsda(0x2000, 0x1b, 0x500000, 0x9b, 0x03, []ehTestCallSite{{0, 4, 0x10, 1}, {4, 4, 0, 0}})
	f.Add(w.b, uint64(0x2000), uint32(0), uint64(0x401000))
	f.Add([]byte{0xff, 0xff, 0x01, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, uint64(0), uint32(0), uint64(0))
	f.Fuzz(func(t *testing.T, data []byte, secAddr uint64, lsdaOff uint32, funcStart uint64) {
		pads, _ := LandingPads(data, secAddr, secAddr+uint64(lsdaOff), funcStart)
		for i := 1; i < len(pads); i++ {
			if pads[i] <= pads[i-1] {
				t.Fatalf("landing pads not sorted/deduplicated: %#x", pads)
			}
		}
		for _, p := range pads {
			if p == 0 {
				t.Fatalf("zero landing pad in %#x", pads)
			}
		}
	})
}
