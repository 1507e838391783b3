// Exception-handling metadata: this file owns the decoding of .eh_frame
// (CIE/FDE records, giving the code range of every function that has unwind
// information and the address of its LSDA) and of the LSDAs stored in
// .gcc_except_table (giving the C++ landing pads of a function). Both are
// places where control can enter code without a visible branch, so the
// rewriter treats FDE starts and landing pads as code entry points.
//
// Everything here works on raw section bytes and virtual addresses only; it
// never dereferences memory outside the section it is given, and it must never
// panic on corrupted input. Errors are collected and returned together with
// whatever could be parsed.

package elfrw

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// FDE is one frame description entry: the code range it covers and its LSDA address (0 if none).
type FDE struct {
	Start, End uint64 // [Start, End) virtual addresses
	LSDA       uint64
}

// ParseEHFrame parses the contents of an .eh_frame section loaded at virtual
// address secAddr (little-endian, 64-bit addresses).
//
// It follows CIE pointers, understands the 'z', 'R', 'P', 'L', 'S', 'B' and
// 'G' augmentation letters (and the legacy "eh" prefix), skips unknown
// letters through the 'z' augmentation length, accepts 64-bit DWARF lengths
// and zero terminators (parsing continues after a terminator). Pointer values
// may use any DW_EH_PE_* value format combined with absptr, pcrel or aligned
// application; textrel, datarel and funcrel are reported as unsupported for
// the entry concerned and parsing continues with the next entry. Indirect
// personality pointers are accepted (the personality itself is not needed).
//
// FDEs whose initial location decodes to 0 (discarded functions) are skipped,
// as the runtime unwinder does. FDEs are returned in section order. On
// corrupted input it returns every FDE it could decode plus an error.
func ParseEHFrame(data []byte, secAddr uint64) ([]FDE, error) {
	return ehParseFrame(data, secAddr, binary.LittleEndian, 8)
}

// LandingPads parses the LSDA at lsdaAddr inside a .gcc_except_table section
// (contents data, loaded at secAddr) for the function that starts at
// funcStart, and returns the absolute addresses of all non-zero landing pads,
// deduplicated and sorted (little-endian, 64-bit addresses).
//
// The LPStart base defaults to funcStart when its encoding is DW_EH_PE_omit;
// the TType table offset is skipped; call-site entries may use any DW_EH_PE_*
// value format (uleb128, udata4, sdata4, ...) with absptr, pcrel, funcrel or
// aligned application. On corrupted input it returns the landing pads found
// before the problem plus an error.
func LandingPads(data []byte, secAddr, lsdaAddr, funcStart uint64) ([]uint64, error) {
	return ehLandingPads(data, secAddr, lsdaAddr, funcStart, binary.LittleEndian, 8)
}

// DW_EH_PE_* pointer encodings.
const (
	ehPEAbsptr  = 0x00
	ehPEUleb128 = 0x01
	ehPEUdata2  = 0x02
	ehPEUdata4  = 0x03
	ehPEUdata8  = 0x04
	ehPESigned  = 0x08
	ehPESleb128 = 0x09
	ehPESdata2  = 0x0a
	ehPESdata4  = 0x0b
	ehPESdata8  = 0x0c

	ehPEPcrel    = 0x10
	ehPETextrel  = 0x20
	ehPEDatarel  = 0x30
	ehPEFuncrel  = 0x40
	ehPEAligned  = 0x50
	ehPEIndirect = 0x80

	ehPEOmit = 0xff
)

const (
	// ehMaxErrors bounds the number of individual errors kept for one call.
	ehMaxErrors = 32
	// ehMaxLEB bounds the length of a LEB128 number (padding included) and
	// ehMaxAug the length of an augmentation string. Both keep the cost of
	// parsing a CIE constant, so hostile CIE pointers cannot make parsing
	// quadratic.
	ehMaxLEB = 32
	ehMaxAug = 64
)

var (
	ehErrTruncated = errors.New("truncated data")
	ehErrLEB       = errors.New("LEB128 number too long")
)

// ehErrList collects errors up to ehMaxErrors.
type ehErrList struct {
	list    []error
	dropped int
}

func (l *ehErrList) add(err error) {
	if len(l.list) < ehMaxErrors {
		l.list = append(l.list, err)
	} else {
		l.dropped++
	}
}

func (l *ehErrList) err() error {
	if l.dropped > 0 {
		l.list = append(l.list, fmt.Errorf("... and %d more errors", l.dropped))
		l.dropped = 0
	}
	return errors.Join(l.list...)
}

// ehReader is a bounds-checked cursor over data[pos:end].
// Invariant: 0 <= pos <= end <= len(data).
type ehReader struct {
	data    []byte
	pos     int
	end     int
	addr    uint64 // virtual address of data[0]
	order   binary.ByteOrder
	ptrSize int // 4 or 8
}

// sub returns a reader over the next n bytes and advances r past them.
func (r *ehReader) sub(n uint64) (ehReader, error) {
	if n > uint64(r.end-r.pos) {
		return ehReader{}, ehErrTruncated
	}
	s := *r
	s.end = r.pos + int(n)
	r.pos = s.end
	return s, nil
}

func (r *ehReader) take(n int) ([]byte, error) {
	if n < 0 || n > r.end-r.pos {
		return nil, ehErrTruncated
	}
	b := r.data[r.pos : r.pos+n]
	r.pos += n
	return b, nil
}

func (r *ehReader) u8() (byte, error) {
	if r.pos >= r.end {
		return 0, ehErrTruncated
	}
	b := r.data[r.pos]
	r.pos++
	return b, nil
}

// fixed reads an unsigned fixed-size integer of 1, 2, 4 or 8 bytes.
func (r *ehReader) fixed(size int) (uint64, error) {
	b, err := r.take(size)
	if err != nil {
		return 0, err
	}
	switch size {
	case 1:
		return uint64(b[0]), nil
	case 2:
		return uint64(r.order.Uint16(b)), nil
	case 4:
		return uint64(r.order.Uint32(b)), nil
	case 8:
		return r.order.Uint64(b), nil
	}
	return 0, fmt.Errorf("invalid integer size %d", size)
}

func (r *ehReader) uleb() (uint64, error) {
	var v uint64
	var shift uint
	for n := 0; ; n++ {
		if n == ehMaxLEB {
			return 0, ehErrLEB
		}
		b, err := r.u8()
		if err != nil {
			return 0, err
		}
		if shift < 64 {
			v |= uint64(b&0x7f) << shift
		}
		shift += 7
		if b&0x80 == 0 {
			return v, nil
		}
	}
}

func (r *ehReader) sleb() (int64, error) {
	var v uint64
	var shift uint
	for n := 0; ; n++ {
		if n == ehMaxLEB {
			return 0, ehErrLEB
		}
		b, err := r.u8()
		if err != nil {
			return 0, err
		}
		if shift < 64 {
			v |= uint64(b&0x7f) << shift
		}
		shift += 7
		if b&0x80 == 0 {
			if shift < 64 && b&0x40 != 0 {
				v |= ^uint64(0) << shift
			}
			return int64(v), nil
		}
	}
}

// cstr reads a NUL-terminated string of at most maxLen bytes.
func (r *ehReader) cstr(maxLen int) (string, error) {
	for i := r.pos; i < r.end; i++ {
		if i-r.pos > maxLen {
			return "", errors.New("string too long")
		}
		if r.data[i] == 0 {
			s := string(r.data[r.pos:i])
			r.pos = i + 1
			return s, nil
		}
	}
	return "", ehErrTruncated
}

func (r *ehReader) mask(v uint64) uint64 {
	if r.ptrSize == 4 {
		return v & 0xffffffff
	}
	return v
}

// value reads a raw value in the format given by the low nibble of a
// DW_EH_PE_* encoding, without applying any base.
func (r *ehReader) value(format byte) (uint64, error) {
	switch format {
	case ehPEAbsptr:
		return r.fixed(r.ptrSize)
	case ehPESigned:
		v, err := r.fixed(r.ptrSize)
		if r.ptrSize == 4 {
			v = uint64(int64(int32(uint32(v))))
		}
		return v, err
	case ehPEUleb128:
		return r.uleb()
	case ehPEUdata2:
		return r.fixed(2)
	case ehPEUdata4:
		return r.fixed(4)
	case ehPEUdata8:
		return r.fixed(8)
	case ehPESleb128:
		v, err := r.sleb()
		return uint64(v), err
	case ehPESdata2:
		v, err := r.fixed(2)
		return uint64(int64(int16(uint16(v)))), err
	case ehPESdata4:
		v, err := r.fixed(4)
		return uint64(int64(int32(uint32(v)))), err
	case ehPESdata8:
		return r.fixed(8)
	}
	return 0, fmt.Errorf("unknown pointer value format %#x", format)
}

// alignFor skips padding so that the next field is pointer-aligned in memory
// (DW_EH_PE_aligned).
func (r *ehReader) alignFor() error {
	ps := uint64(r.ptrSize)
	at := r.addr + uint64(r.pos)
	_, err := r.take(int((ps - at%ps) % ps))
	return err
}

// encoded reads a pointer with DW_EH_PE_* encoding enc and applies its base.
// The indirect bit is ignored; callers decide whether they can accept it.
// As in the runtime unwinder, a raw value of 0 stays 0 (no base applied).
// On an unsupported application the value is still consumed, so the reader
// stays positioned after the field.
func (r *ehReader) encoded(enc byte, funcBase uint64, haveFunc bool) (uint64, error) {
	if enc == ehPEOmit {
		return 0, errors.New("pointer encoding is DW_EH_PE_omit where a value is required")
	}
	app := enc & 0x70
	if app == ehPEAligned {
		if err := r.alignFor(); err != nil {
			return 0, err
		}
		v, err := r.value(ehPEAbsptr)
		return r.mask(v), err
	}
	fieldAddr := r.addr + uint64(r.pos)
	v, err := r.value(enc & 0x0f)
	if err != nil {
		return 0, err
	}
	switch app {
	case ehPEAbsptr, ehPEPcrel:
	case ehPEFuncrel:
		if !haveFunc {
			return 0, fmt.Errorf("unsupported pointer encoding %#x (funcrel outside an LSDA)", enc)
		}
	case ehPETextrel:
		return 0, fmt.Errorf("unsupported pointer encoding %#x (textrel)", enc)
	case ehPEDatarel:
		return 0, fmt.Errorf("unsupported pointer encoding %#x (datarel)", enc)
	default:
		return 0, fmt.Errorf("invalid pointer encoding %#x", enc)
	}
	if v == 0 {
		return 0, nil
	}
	switch app {
	case ehPEPcrel:
		v += fieldAddr
	case ehPEFuncrel:
		v += funcBase
	}
	return r.mask(v), nil
}

// skipEncoded consumes a pointer with encoding enc without interpreting it.
func (r *ehReader) skipEncoded(enc byte) error {
	if enc == ehPEOmit {
		return nil
	}
	if enc&0x70 == ehPEAligned {
		if err := r.alignFor(); err != nil {
			return err
		}
		_, err := r.value(ehPEAbsptr)
		return err
	}
	_, err := r.value(enc & 0x0f)
	return err
}

// ehEntry is the header of one .eh_frame record (CIE, FDE or terminator).
type ehEntry struct {
	off        int    // offset of the length field
	idOff      int    // offset of the CIE id / CIE pointer field
	offSize    int    // 4, or 8 for 64-bit DWARF
	end        int    // offset one past the record; valid when sized
	sized      bool   // end is known, so parsing can resume there
	id         uint64 // CIE id (0) or CIE pointer
	terminator bool
}

func ehReadEntry(data []byte, off int, order binary.ByteOrder) (ehEntry, error) {
	e := ehEntry{off: off, offSize: 4}
	r := ehReader{data: data, pos: off, end: len(data), order: order, ptrSize: 8}
	length, err := r.fixed(4)
	if err != nil {
		return e, fmt.Errorf("record at offset %#x: truncated length", off)
	}
	if length == 0 {
		e.terminator = true
		e.end, e.sized = r.pos, true
		return e, nil
	}
	if length == 0xffffffff {
		e.offSize = 8
		if length, err = r.fixed(8); err != nil {
			return e, fmt.Errorf("record at offset %#x: truncated 64-bit length", off)
		}
	} else if length >= 0xfffffff0 {
		return e, fmt.Errorf("record at offset %#x: reserved length value %#x", off, length)
	}
	if length > uint64(r.end-r.pos) {
		return e, fmt.Errorf("record at offset %#x: length %#x exceeds section", off, length)
	}
	e.idOff = r.pos
	e.end, e.sized = r.pos+int(length), true
	if length < uint64(e.offSize) {
		return e, fmt.Errorf("record at offset %#x: length %#x too short", off, length)
	}
	e.id, _ = r.fixed(e.offSize)
	return e, nil
}

// ehCIE holds what FDE decoding needs from a CIE.
type ehCIE struct {
	fdeEnc  byte
	lsdaEnc byte
	hasAug  bool  // 'z': FDEs carry an augmentation data block
	ptrSize int   // address size (from a version 4 CIE, else the default)
	encErr  error // the FDE pointer encoding could not be determined
	lsdaErr error // the LSDA pointer encoding could not be determined
	err     error // the CIE is unusable
}

func ehParseCIE(data []byte, e ehEntry, secAddr uint64, order binary.ByteOrder, ptrSize int) *ehCIE {
	c := &ehCIE{fdeEnc: ehPEAbsptr, lsdaEnc: ehPEOmit, ptrSize: ptrSize}
	fail := func(format string, args ...any) *ehCIE {
		c.err = fmt.Errorf("CIE at offset %#x: %s", e.off, fmt.Sprintf(format, args...))
		return c
	}
	r := ehReader{data: data, pos: e.idOff + e.offSize, end: e.end, addr: secAddr, order: order, ptrSize: ptrSize}
	version, err := r.u8()
	if err != nil {
		return fail("truncated version")
	}
	if version != 1 && version != 3 && version != 4 {
		return fail("unsupported version %d", version)
	}
	aug, err := r.cstr(ehMaxAug)
	if err != nil {
		return fail("augmentation string: %v", err)
	}
	if version == 4 {
		b, err := r.take(2) // address_size, segment_selector_size
		if err != nil {
			return fail("truncated address size")
		}
		switch b[0] {
		case 4, 8:
			c.ptrSize = int(b[0])
			r.ptrSize = c.ptrSize
		default:
			return fail("unsupported address size %d", b[0])
		}
	}
	if strings.HasPrefix(aug, "eh") { // legacy GCC: an EH data pointer follows
		if _, err := r.take(c.ptrSize); err != nil {
			return fail("truncated eh pointer")
		}
		aug = aug[2:]
	}
	if _, err := r.uleb(); err != nil {
		return fail("code alignment factor: %v", err)
	}
	if _, err := r.sleb(); err != nil {
		return fail("data alignment factor: %v", err)
	}
	if version == 1 {
		_, err = r.u8()
	} else {
		_, err = r.uleb()
	}
	if err != nil {
		return fail("return address register: %v", err)
	}
	if !strings.HasPrefix(aug, "z") {
		if strings.ContainsAny(aug, "RLP") {
			return fail("augmentation %q has data but no 'z' length", aug)
		}
		return c
	}
	c.hasAug = true
	augLen, err := r.uleb()
	if err != nil {
		return fail("augmentation length: %v", err)
	}
	ar, err := r.sub(augLen)
	if err != nil {
		return fail("augmentation length %#x exceeds record", augLen)
	}
	for i := 1; i < len(aug); i++ {
		switch ch := aug[i]; ch {
		case 'L':
			if c.lsdaEnc, err = ar.u8(); err != nil {
				return fail("truncated LSDA encoding")
			}
		case 'R':
			if c.fdeEnc, err = ar.u8(); err != nil {
				return fail("truncated FDE encoding")
			}
		case 'P':
			enc, err := ar.u8()
			if err != nil {
				return fail("truncated personality encoding")
			}
			if err := ar.skipEncoded(enc &^ ehPEIndirect); err != nil {
				return fail("personality pointer: %v", err)
			}
		case 'S', 'B', 'G':
			// Signal frame, AArch64 BTI, AArch64 MTE: no data.
		default:
			// Unknown letter: its data size is unknown, so stop here; the
			// 'z' length lets us skip the rest. Encodings given by later
			// letters stay unknown.
			rest := aug[i+1:]
			if strings.IndexByte(rest, 'R') >= 0 {
				c.encErr = fmt.Errorf("CIE at offset %#x: FDE encoding follows unknown augmentation %q", e.off, ch)
			}
			if strings.IndexByte(rest, 'L') >= 0 {
				c.lsdaErr = fmt.Errorf("CIE at offset %#x: LSDA encoding follows unknown augmentation %q", e.off, ch)
			}
			return c
		}
	}
	return c
}

func ehParseFrame(data []byte, secAddr uint64, order binary.ByteOrder, ptrSize int) ([]FDE, error) {
	var (
		fdes []FDE
		errs ehErrList
		cies = map[int]*ehCIE{}
	)
	// cieAt returns the (cached) CIE at off, reporting parse errors once.
	cieAt := func(off int) (*ehCIE, error) {
		if c, ok := cies[off]; ok {
			return c, c.err
		}
		e, err := ehReadEntry(data, off, order)
		c := &ehCIE{err: err}
		switch {
		case err != nil:
		case e.terminator:
			c.err = fmt.Errorf("offset %#x is a terminator, not a CIE", off)
		case e.id != 0:
			c.err = fmt.Errorf("record at offset %#x is not a CIE", off)
		default:
			c = ehParseCIE(data, e, secAddr, order, ptrSize)
		}
		cies[off] = c
		return c, c.err
	}

	for off := 0; off < len(data); {
		e, err := ehReadEntry(data, off, order)
		if err != nil {
			errs.add(fmt.Errorf("eh_frame: %w", err))
			if !e.sized {
				break // cannot find the next record
			}
			off = e.end
			continue
		}
		off = e.end
		if e.terminator {
			continue
		}
		if e.id == 0 {
			if _, err := cieAt(e.off); err != nil {
				errs.add(fmt.Errorf("eh_frame: %w", err))
			}
			continue
		}
		fde, ok, err := ehParseFDE(data, e, secAddr, order, ptrSize, cies, cieAt)
		if err != nil {
			errs.add(fmt.Errorf("eh_frame: FDE at offset %#x: %w", e.off, err))
		}
		if ok {
			fdes = append(fdes, fde)
		}
	}
	return fdes, errs.err()
}

// ehParseFDE decodes one FDE. ok reports whether fde holds a usable range; an
// error with ok set means the range is good but the LSDA could not be read.
func ehParseFDE(data []byte, e ehEntry, secAddr uint64, order binary.ByteOrder, ptrSize int,
	cies map[int]*ehCIE, cieAt func(int) (*ehCIE, error)) (fde FDE, ok bool, err error) {
	if e.id > uint64(e.idOff) {
		return fde, false, fmt.Errorf("CIE pointer %#x points before the section", e.id)
	}
	cieOff := e.idOff - int(e.id)
	_, seen := cies[cieOff]
	c, err := cieAt(cieOff)
	if err != nil {
		if seen {
			return fde, false, fmt.Errorf("uses invalid CIE at offset %#x", cieOff)
		}
		return fde, false, err
	}
	if c.encErr != nil {
		return fde, false, c.encErr
	}
	if c.fdeEnc&ehPEIndirect != 0 {
		return fde, false, fmt.Errorf("unsupported indirect FDE pointer encoding %#x", c.fdeEnc)
	}
	r := ehReader{data: data, pos: e.idOff + e.offSize, end: e.end, addr: secAddr, order: order, ptrSize: c.ptrSize}
	start, err := r.encoded(c.fdeEnc, 0, false)
	if err != nil {
		return fde, false, fmt.Errorf("initial location: %w", err)
	}
	format := c.fdeEnc & 0x0f
	if c.fdeEnc&0x70 == ehPEAligned {
		format = ehPEAbsptr
	}
	size, err := r.value(format)
	if err != nil {
		return fde, false, fmt.Errorf("address range: %w", err)
	}
	size = r.mask(size)
	if start == 0 {
		return fde, false, nil // discarded function; the unwinder ignores it too
	}
	end := start + size
	if end < start || r.mask(end) != end {
		return fde, false, fmt.Errorf("range %#x+%#x overflows", start, size)
	}
	fde = FDE{Start: start, End: end}
	if !c.hasAug {
		return fde, true, nil
	}
	augLen, err := r.uleb()
	if err != nil {
		return fde, true, fmt.Errorf("augmentation length: %w", err)
	}
	ar, err := r.sub(augLen)
	if err != nil {
		return fde, true, fmt.Errorf("augmentation length %#x exceeds record", augLen)
	}
	if c.lsdaErr != nil {
		return fde, true, c.lsdaErr
	}
	if c.lsdaEnc == ehPEOmit {
		return fde, true, nil
	}
	if c.lsdaEnc&ehPEIndirect != 0 {
		return fde, true, fmt.Errorf("unsupported indirect LSDA pointer encoding %#x", c.lsdaEnc)
	}
	lsda, err := ar.encoded(c.lsdaEnc, 0, false)
	if err != nil {
		return fde, true, fmt.Errorf("LSDA pointer: %w", err)
	}
	fde.LSDA = lsda
	return fde, true, nil
}

func ehLandingPads(data []byte, secAddr, lsdaAddr, funcStart uint64, order binary.ByteOrder, ptrSize int) ([]uint64, error) {
	if lsdaAddr < secAddr || lsdaAddr-secAddr >= uint64(len(data)) {
		return nil, fmt.Errorf("gcc_except_table: LSDA address %#x outside section [%#x, %#x)",
			lsdaAddr, secAddr, secAddr+uint64(len(data)))
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("gcc_except_table: LSDA at %#x: %s", lsdaAddr, fmt.Sprintf(format, args...))
	}
	r := ehReader{data: data, pos: int(lsdaAddr - secAddr), end: len(data), addr: secAddr, order: order, ptrSize: ptrSize}

	lpStartEnc, err := r.u8()
	if err != nil {
		return nil, fail("truncated LPStart encoding")
	}
	lpStart := funcStart
	if lpStartEnc != ehPEOmit {
		if lpStartEnc&ehPEIndirect != 0 {
			return nil, fail("unsupported indirect LPStart encoding %#x", lpStartEnc)
		}
		if lpStart, err = r.encoded(lpStartEnc, funcStart, true); err != nil {
			return nil, fail("LPStart: %v", err)
		}
	}
	ttypeEnc, err := r.u8()
	if err != nil {
		return nil, fail("truncated TType encoding")
	}
	if ttypeEnc != ehPEOmit {
		if _, err := r.uleb(); err != nil {
			return nil, fail("TType offset: %v", err)
		}
	}
	csEnc, err := r.u8()
	if err != nil {
		return nil, fail("truncated call-site encoding")
	}
	if csEnc == ehPEOmit || csEnc&ehPEIndirect != 0 {
		return nil, fail("unsupported call-site encoding %#x", csEnc)
	}
	csLen, err := r.uleb()
	if err != nil {
		return nil, fail("call-site table length: %v", err)
	}
	cs, err := r.sub(csLen)
	if err != nil {
		return nil, fail("call-site table length %#x exceeds section", csLen)
	}

	var pads []uint64
	for cs.pos < cs.end {
		entry := cs.addr + uint64(cs.pos)
		var lp uint64
		_, err = cs.encoded(csEnc, funcStart, true) // call-site start
		if err == nil {
			_, err = cs.encoded(csEnc, funcStart, true) // call-site length
		}
		if err == nil {
			lp, err = cs.encoded(csEnc, funcStart, true)
		}
		if err == nil {
			_, err = cs.uleb() // action
		}
		if err != nil {
			err = fail("call-site entry at %#x: %v", entry, err)
			break
		}
		if lp == 0 {
			continue // no landing pad for this call site
		}
		if pad := cs.mask(lpStart + lp); pad != 0 {
			pads = append(pads, pad)
		}
	}
	slices.Sort(pads)
	return slices.Compact(pads), err
}
