package shadow

import "math/bits"

// The layout of a cell's four words (see the package documentation). The
// runtime's C fast path reads and writes word 0 itself; it gets these
// numbers from runtime/hgabi.h, generated from them (package abi).

// Cell word 0: the memory state in the top 4 bits, then the epoch of the
// last access in a cell epoch's packing, narrower than Epoch's (tid in bits
// 44-59, the low 36 bits of the clock in bits 0-35), with the granule's
// touched mask in bits 36-43, between the two, so that the fast path keeps
// it up to date with the word it reads anyway.
const (
	StateShift    = 60 // msm.State, or StateSplit
	CellTIDShift  = 44
	CellClockBits = 36
	CellClockMask = 1<<CellClockBits - 1
	// TouchedShift locates the touched mask (a bit per byte): the bytes of the
	// granule accessed since the cell was last reset (split.go).
	TouchedShift = CellClockBits
	// TouchedMask is the touched mask in word 0, in place.
	TouchedMask = uint64(1<<GranuleSize-1) << TouchedShift
	// CellEpochMask keeps the epoch bits of word 0.
	CellEpochMask = (1<<StateShift - 1) &^ TouchedMask
	// StateSplit in the state bits marks a split granule (split.go). It is
	// outside the range of msm.State.
	StateSplit = 15
	// StateBusy marks a granule while the Go side splits it (split.go):
	// the C fast path, which handles no such state, leaves its accesses to
	// the Go side, whose stripe lock waits for the split. Outside the range
	// of msm.State too.
	StateBusy = 14
)

// CellEpoch packs a thread's current segment as word 0 stores it.
func CellEpoch(tid uint16, clock uint64) uint64 {
	return uint64(tid)<<CellTIDShift | clock&CellClockMask
}

// CellEpochTID is the thread id of a cell epoch (or of word 0).
func CellEpochTID(e uint64) uint16 { return uint16(e >> CellTIDShift) }

// PackWord0 builds word 0 from a state, an epoch and a touched mask (in
// place, as TouchedMask selects it).
func PackWord0(state uint8, epoch, touched uint64) uint64 {
	return uint64(state)<<StateShift | epoch&CellEpochMask | touched&TouchedMask
}

// Word0State is the state bits of word 0.
func Word0State(w uint64) uint8 { return uint8(w >> StateShift) }

// Touched is the touched mask of word 0, shifted down to bits 0-3.
func Touched(w uint64) uint8 { return uint8((w & TouchedMask) >> TouchedShift) }

// Cell word 1: lockset id (low 32) | threadset id (high 32). In the
// exclusive states the lockset is the owner's (msm, choice 13) and the
// high half, where they keep no threadset, the clock of the history's
// other access when it is a past owner's (runtime/detect, pastClock). A
// split cell holds the offset of its side cells there instead.

// PackSets builds word 1 of a cell: lockset id (low 32) | threadset id (high 32).
func PackSets(lockset, threadset uint32) uint64 { return uint64(lockset) | uint64(threadset)<<32 }

// UnpackSets splits word 1 of a cell.
func UnpackSets(w uint64) (lockset, threadset uint32) { return uint32(w), uint32(w >> 32) }

// Cell words 2 and 3: the access history, for reports (runtime/detect:
// the latest access, and the latest by another thread). Each is
//
//	bits  0-27: pc, the instruction's link-time address (0 if it does not fit)
//	bits 28-43: thread id
//	bits 44-47: flags (read, write, atomic, free)
//	bits 48-50: log2 of the size in bytes (1 to 128; larger sizes as 128)
//	bits 51-53: the access's first byte within the granule
//	bit  54:    the access covered only part of this granule's share of
//	            it (the partial end of a longer access): bits 48-50 hold
//	            instead the number of bytes covered here, less one
//	bits 55-63: the lockset id that guarded the access, or AccessLocksUnknown
const (
	AccessPCBits       = 28
	AccessTIDShift     = 28
	AccessFlagShift    = 44
	AccessSizeShift    = 48
	AccessOffShift     = 51
	AccessPartBit      = 1 << (AccessOffShift + GranuleShift)
	AccessLocksShift   = AccessOffShift + GranuleShift + 1
	AccessLocksUnknown = 1<<(64-AccessLocksShift) - 1 // a lockset id too large, or not known (the C fast path)
)

// PackAccess builds an access word (cell word 2 or 3) for an access of
// size bytes at addr.
func PackAccess(pc uint32, tid uint16, flags uint8, addr, size uint64, locks uint32) uint64 {
	if pc >= 1<<AccessPCBits {
		pc = 0
	}
	if locks >= AccessLocksUnknown {
		locks = AccessLocksUnknown
	}
	lg := uint64(0)
	for lg < 7 && uint64(1)<<lg < size {
		lg++
	}
	return uint64(pc) | uint64(tid)<<AccessTIDShift | uint64(flags&0xf)<<AccessFlagShift |
		lg<<AccessSizeShift | addr%GranuleSize<<AccessOffShift | uint64(locks)<<AccessLocksShift
}

// PackAccessBytes builds an access word for the bytes mask (contiguous,
// not empty) of one granule that a longer access covers (the partial
// granule at either end: bytes 0-2 of the last one cannot be told as a
// first byte and a power of two). Its size reads as the number of those
// bytes.
func PackAccessBytes(pc uint32, tid uint16, flags uint8, mask uint64, locks uint32) uint64 {
	mask &= 1<<GranuleSize - 1
	w := PackAccess(pc, tid, flags, uint64(bits.TrailingZeros64(mask|1<<GranuleSize)), 1, locks)
	n := uint64(max(bits.OnesCount64(mask), 1))
	return w | AccessPartBit | (n-1)<<AccessSizeShift
}

// UnpackAccess splits an access word. locks is AccessLocksUnknown when the
// lockset is not known.
func UnpackAccess(w uint64) (pc uint32, tid uint16, flags uint8, size uint64, locks uint32) {
	size = uint64(1) << (w >> AccessSizeShift & 7)
	if w&AccessPartBit != 0 {
		size = w>>AccessSizeShift&7 + 1
	}
	return uint32(w & (1<<AccessPCBits - 1)), uint16(w >> AccessTIDShift), uint8(w>>AccessFlagShift) & 0xf,
		size, uint32(w >> AccessLocksShift)
}

// AccessBytes is the mask of the bytes of its granule that the access of
// word w covered (bit i for byte i), as ByteMask gives for a new access;
// all of them for an access that spans granules (the word does not say which
// of its granules this is).
func AccessBytes(w uint64) uint64 {
	off := w >> AccessOffShift & (GranuleSize - 1)
	if w&AccessPartBit != 0 {
		return (1<<(w>>AccessSizeShift&7+1) - 1) << off & (1<<GranuleSize - 1)
	}
	size := uint64(1) << (w >> AccessSizeShift & 7)
	if off+size > GranuleSize {
		return 1<<GranuleSize - 1 // it spans granules: all of this one, to be safe
	}
	return (1<<size - 1) << off
}
