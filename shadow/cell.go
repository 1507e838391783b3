package shadow

import "math/bits"

// The layout of a cell's four words (see the package documentation). The
// runtime's C fast path reads and writes word 0 itself; it gets these
// numbers from runtime/hgabi.h, generated from them (package abi).

// Cell word 0: the memory state in the top 4 bits, then the epoch of the
// last access in a cell epoch's packing, narrower than Epoch's (tid in bits
// 44-59, the low 40 bits of the clock in bits 0-39), with the granule's touched mask in bits 40-43, between the two, so
// that the fast path keeps it up to date with the word it reads anyway.
const (
	StateShift    = 60 // msm.State, or StateSplit
	CellTIDShift  = 44
	CellClockBits = 40
	CellClockMask = 1<<CellClockBits - 1
	// TouchedShift locates the 4-bit touched mask: the bytes of the
	// granule accessed since the cell was last reset (split.go).
	TouchedShift = 40
	// TouchedMask is the touched mask in word 0, in place.
	TouchedMask = uint64(0xf) << TouchedShift
	// CellEpochMask keeps the epoch bits of word 0.
	CellEpochMask = (1<<StateShift - 1) &^ TouchedMask
	// StateSplit in the state bits marks a split granule (split.go). It is
	// outside the range of msm.State.
	StateSplit = 15
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
//	bits 51-52: the access's first byte within the granule
//	bit  53:    bits 48-51 hold instead the mask of the bytes covered in
//	            this granule (the partial end of a longer access)
//	bits 54-63: the lockset id that guarded the access, or AccessLocksUnknown
const (
	AccessPCBits       = 28
	AccessTIDShift     = 28
	AccessFlagShift    = 44
	AccessSizeShift    = 48
	AccessOffShift     = 51
	AccessMaskBit      = 1 << 53
	AccessLocksShift   = 54
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

// PackAccessBytes builds an access word for the bytes mask of one
// granule that a longer access covers (the partial granule at either end:
// bytes 0-2 of the last one cannot be told as a first byte and a power of
// two). Its size reads as the number of those bytes.
func PackAccessBytes(pc uint32, tid uint16, flags uint8, mask uint64, locks uint32) uint64 {
	w := PackAccess(pc, tid, flags, 0, 1, locks)
	w &^= (1<<AccessLocksShift - 1) &^ (1<<AccessSizeShift - 1) // size and offset
	return w | AccessMaskBit | mask&(1<<GranuleSize-1)<<AccessSizeShift
}

// UnpackAccess splits an access word. locks is AccessLocksUnknown when the
// lockset is not known.
func UnpackAccess(w uint64) (pc uint32, tid uint16, flags uint8, size uint64, locks uint32) {
	size = uint64(1) << (w >> AccessSizeShift & 7)
	if w&AccessMaskBit != 0 {
		size = uint64(bits.OnesCount64(w >> AccessSizeShift & (1<<GranuleSize - 1)))
	}
	return uint32(w & (1<<AccessPCBits - 1)), uint16(w >> AccessTIDShift), uint8(w>>AccessFlagShift) & 0xf,
		size, uint32(w >> AccessLocksShift)
}

// AccessBytes is the mask of the bytes of its granule that the access of
// word w covered (bit i for byte i), as ByteMask gives for a new access;
// all four for an access that spans granules (the word does not say which
// of its granules this is).
func AccessBytes(w uint64) uint64 {
	if w&AccessMaskBit != 0 {
		return w >> AccessSizeShift & (1<<GranuleSize - 1)
	}
	off := w >> AccessOffShift & (GranuleSize - 1)
	size := uint64(1) << (w >> AccessSizeShift & 7)
	if off+size > GranuleSize {
		return 1<<GranuleSize - 1 // it spans granules: all of this one, to be safe
	}
	return (1<<size - 1) << off
}
