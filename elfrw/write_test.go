package elfrw

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"hgrewrite/abi"
	"testing"
)

// rwDummyText is the trampoline segment used by the write tests: `ret`s.
var rwDummyText = bytes.Repeat([]byte{0xc3}, 16)

// rwRewrite plans and writes b with rwDummyText and no patches; both runtime
// slots point at the first `ret`.
func rwRewrite(t *testing.T, b *Binary) (*Layout, []byte) {
	t.Helper()
	l, err := b.PlanLayout()
	if err != nil {
		t.Fatalf("PlanLayout: %v", err)
	}
	out, err := b.Write(l, rwDummyText, l.TextAddr, nil)
	if err != nil {
		t.Fatalf("Write: %v", err)
	}
	return l, out
}

// rwVRead reads n bytes at vaddr from a file image through its PT_LOADs.
func rwVRead(t *testing.T, f *elf.File, img []byte, vaddr, n uint64) []byte {
	t.Helper()
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && vaddr >= p.Vaddr && vaddr+n <= p.Vaddr+p.Filesz {
			off := p.Off + vaddr - p.Vaddr
			if off+n > uint64(len(img)) {
				t.Fatalf("%#x+%d lies in a segment beyond the file", vaddr, n)
			}
			return img[off : off+n]
		}
	}
	t.Fatalf("%#x+%d is not file-backed by any PT_LOAD", vaddr, n)
	return nil
}

func rwDynEntries(raw []byte) []DynEntry {
	var d []DynEntry
	for i := 0; i+16 <= len(raw); i += 16 {
		e := DynEntry{elf.DynTag(binary.LittleEndian.Uint64(raw[i:])), binary.LittleEndian.Uint64(raw[i+8:])}
		if e.Tag == elf.DT_NULL {
			break
		}
		d = append(d, e)
	}
	return d
}

func rwCString(tab []byte, off uint64) string {
	s, _ := cString(tab, off)
	return s
}

// rwX86Feature1 returns GNU_PROPERTY_X86_FEATURE_1_AND from a
// .note.gnu.property section, if present.
func rwX86Feature1(note []byte) (uint32, bool) {
	for len(note) >= 12 {
		namesz := alignUp(uint64(binary.LittleEndian.Uint32(note)), 4)
		descsz := uint64(binary.LittleEndian.Uint32(note[4:]))
		typ := binary.LittleEndian.Uint32(note[8:])
		if 12+namesz+descsz > uint64(len(note)) {
			return 0, false
		}
		desc := note[12+namesz : 12+namesz+descsz]
		if typ == 5 && bytes.HasPrefix(note[12:], []byte("GNU\x00")) {
			for len(desc) >= 8 {
				pt := binary.LittleEndian.Uint32(desc)
				sz := uint64(binary.LittleEndian.Uint32(desc[4:]))
				if 8+sz > uint64(len(desc)) {
					break
				}
				if pt == 0xc0000002 && sz >= 4 {
					return binary.LittleEndian.Uint32(desc[8:]), true
				}
				desc = desc[min(alignUp(8+sz, 8), uint64(len(desc))):]
			}
		}
		note = note[min(alignUp(12+namesz+descsz, 4), uint64(len(note))):]
	}
	return 0, false
}

// rwCheckRewritten checks the structure of a rewritten image with
// debug/elf, independently of the writer's own bookkeeping where possible.
func rwCheckRewritten(t *testing.T, b *Binary, l *Layout, out []byte, wantMoved bool) *elf.File {
	t.Helper()
	in := b.F
	f, err := elf.NewFile(bytes.NewReader(out))
	if err != nil {
		t.Fatalf("debug/elf rejects the output: %v", err)
	}
	if l.movePhdrs != wantMoved {
		t.Errorf("program header table moved = %v, want %v (%d spare entries)", l.movePhdrs, wantMoved, b.spareProgHeaders())
	}

	// Parse must refuse to rewrite the output again.
	b2, err := Parse(out)
	var e *Error
	if !errors.As(err, &e) || !strings.Contains(e.Msg, "already rewritten") {
		t.Errorf("Parse(output): error %v (accepted: %v); want an *Error saying it is already rewritten", err, b2 != nil)
	}
	if !bytes.Equal(out[:16], b.Data[:16]) || f.Type != in.Type || f.Entry != in.Entry {
		t.Error("ELF identification, type or entry point changed")
	}

	// PT_LOADs.
	var loads []elf.ProgHeader
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			loads = append(loads, p.ProgHeader)
		}
		if p.Type == elf.PT_GNU_PROPERTY {
			t.Error("output still has PT_GNU_PROPERTY")
		}
	}
	if len(loads) != len(b.Loads)+2 {
		t.Fatalf("%d PT_LOADs, want %d", len(loads), len(b.Loads)+2)
	}
	for i, p := range b.Loads {
		if loads[i] != p {
			t.Errorf("PT_LOAD %d changed: %+v -> %+v", i, p, loads[i])
		}
	}
	for i, p := range loads {
		if i > 0 && p.Vaddr < loads[i-1].Vaddr+loads[i-1].Memsz {
			t.Errorf("PT_LOAD %d at %#x overlaps or precedes the previous one (%#x+%#x)", i, p.Vaddr, loads[i-1].Vaddr, loads[i-1].Memsz)
		}
		if p.Off%pageSize != p.Vaddr%pageSize {
			t.Errorf("PT_LOAD %d: offset %#x and address %#x not congruent mod 4096", i, p.Off, p.Vaddr)
		}
		if p.Flags&elf.PF_W != 0 && p.Flags&elf.PF_X != 0 {
			t.Errorf("PT_LOAD %d is writable and executable", i)
		}
		if p.Off+p.Filesz > uint64(len(out)) {
			t.Errorf("PT_LOAD %d extends beyond the file", i)
		}
	}
	data, text := loads[len(b.Loads)], loads[len(b.Loads)+1]
	if data.Vaddr != l.DataAddr || data.Flags != elf.PF_R|elf.PF_W || data.Off != l.DataOff || data.Filesz != l.DataSize {
		t.Errorf("data PT_LOAD %+v, layout %#x size %#x off %#x", data, l.DataAddr, l.DataSize, l.DataOff)
	}
	if text.Vaddr != l.TextAddr || text.Flags != elf.PF_R|elf.PF_X || text.Filesz != uint64(len(rwDummyText)) {
		t.Errorf("text PT_LOAD %+v, layout %#x", text, l.TextAddr)
	} else if got := rwVRead(t, f, out, l.TextAddr, uint64(len(rwDummyText))); !bytes.Equal(got, rwDummyText) {
		t.Errorf("text segment holds %x", got)
	}
	if !b.PIE && l.TextAddr+uint64(len(rwDummyText)) > 1<<31 {
		t.Errorf("non-PIE text at %#x is beyond 2 GiB", l.TextAddr)
	}

	// Runtime header.
	hdr := rwVRead(t, f, out, l.DataAddr, abi.HeaderSize)
	le := binary.LittleEndian
	if string(hdr[:8]) != abi.HeaderMagic {
		t.Errorf("header magic %q", hdr[:8])
	}
	wantFlags := uint32(0)
	if b.PIE {
		wantFlags = abi.HdrFlagPIE
	}
	if le.Uint32(hdr[abi.HdrOffVersion:]) != abi.HeaderVersion || le.Uint32(hdr[abi.HdrOffFlags:]) != wantFlags ||
		le.Uint64(hdr[abi.HdrOffTextAddr:]) != l.TextAddr || le.Uint64(hdr[abi.HdrOffTextSize:]) != uint64(len(rwDummyText)) ||
		le.Uint64(hdr[abi.HdrOffSlotAccess:]) != l.TextAddr || le.Uint64(hdr[abi.HdrOffSlotRange:]) != l.TextAddr ||
		le.Uint64(hdr[abi.HdrOffSlotBatch:]) != l.TextAddr {
		t.Errorf("runtime header %x", hdr)
	}
	if l.SlotAccess() != l.DataAddr+abi.HdrOffSlotAccess || l.SlotRange() != l.DataAddr+abi.HdrOffSlotRange ||
		l.SlotBatch() != l.DataAddr+abi.HdrOffSlotBatch {
		t.Error("slot addresses")
	}

	// Program header table.
	phoff := le.Uint64(out[rwOffPhoff:])
	phnum := uint64(le.Uint16(out[rwOffPhnum:]))
	var phdr *elf.Prog
	for _, p := range f.Progs {
		if p.Type == elf.PT_PHDR {
			phdr = p
		}
	}
	if wantMoved {
		if phoff < data.Off || phoff+phnum*phdrSize > data.Off+data.Filesz {
			t.Errorf("e_phoff %#x (%d entries) is not inside the data segment at %#x+%#x", phoff, phnum, data.Off, data.Filesz)
		}
		if phnum != uint64(len(in.Progs))+2 {
			t.Errorf("e_phnum = %d, want %d", phnum, len(in.Progs)+2)
		}
		if data.Vaddr-data.Off != b.Loads[0].Vaddr-b.Loads[0].Off {
			t.Errorf("data segment vaddr-offset %#x differs from the first PT_LOAD's %#x", data.Vaddr-data.Off, b.Loads[0].Vaddr-b.Loads[0].Off)
		}
	} else {
		if phoff != b.phoff() || phnum != uint64(len(in.Progs)) {
			t.Errorf("in-place table moved: e_phoff %#x e_phnum %d", phoff, phnum)
		}
		for _, p := range f.Progs {
			if p.Type == elf.PT_NOTE {
				t.Error("in-place table still has a PT_NOTE")
			}
		}
	}
	if phdr != nil {
		if phdr.Off != phoff || phdr.Filesz != phnum*phdrSize || phdr.Memsz != phdr.Filesz {
			t.Errorf("PT_PHDR %+v, e_phoff %#x e_phnum %d", phdr.ProgHeader, phoff, phnum)
		}
		var covering *elf.ProgHeader
		for i := range loads {
			if phdr.Off >= loads[i].Off && phdr.Off+phdr.Filesz <= loads[i].Off+loads[i].Filesz {
				covering = &loads[i]
			}
		}
		if covering == nil || phdr.Vaddr-covering.Vaddr != phdr.Off-covering.Off {
			t.Errorf("PT_PHDR %+v is not mapped at its address by a PT_LOAD", phdr.ProgHeader)
		}
		if f.Progs[0].Type != elf.PT_PHDR {
			t.Error("PT_PHDR is not the first program header")
		}
	}
	for _, p := range in.Progs {
		if p.Type == elf.PT_NOTE || p.Type == elf.PT_GNU_PROPERTY || p.Type == elf.PT_DYNAMIC || p.Type == elf.PT_PHDR {
			continue
		}
		if !slices.ContainsFunc(f.Progs, func(q *elf.Prog) bool { return q.ProgHeader == p.ProgHeader }) {
			t.Errorf("program header %+v lost", p.ProgHeader)
		}
	}

	// Dynamic section.
	var dynProg *elf.Prog
	for _, p := range f.Progs {
		if p.Type == elf.PT_DYNAMIC {
			dynProg = p
		}
	}
	if dynProg == nil {
		t.Fatal("no PT_DYNAMIC")
	}
	if dynProg.Vaddr < data.Vaddr || dynProg.Vaddr+dynProg.Filesz > data.Vaddr+data.Filesz || dynProg.Vaddr != l.dynAddr {
		t.Fatalf("PT_DYNAMIC %+v is not the new dynamic section in the data segment", dynProg.ProgHeader)
	}
	if dynProg.Off != data.Off+dynProg.Vaddr-data.Vaddr {
		t.Errorf("PT_DYNAMIC offset %#x does not match its address", dynProg.Off)
	}
	dyn := rwDynEntries(rwVRead(t, f, out, dynProg.Vaddr, dynProg.Filesz))
	if len(dyn) == 0 || dyn[0].Tag != elf.DT_NEEDED {
		t.Fatalf("first dynamic entry %v is not DT_NEEDED", dyn)
	}
	val := func(tag elf.DynTag) uint64 {
		for _, e := range dyn {
			if e.Tag == tag {
				return e.Val
			}
		}
		t.Fatalf("no %v in the new dynamic section", tag)
		return 0
	}
	strAddr, strSize := val(elf.DT_STRTAB), val(elf.DT_STRSZ)
	if strAddr < data.Vaddr || strAddr+strSize > data.Vaddr+data.Filesz {
		t.Errorf("DT_STRTAB %#x+%#x is not in the data segment", strAddr, strSize)
	}
	strtab := rwVRead(t, f, out, strAddr, strSize)
	if got := rwCString(strtab, dyn[0].Val); got != NeededEntry {
		t.Errorf("first DT_NEEDED is %q, want %q", got, NeededEntry)
	}
	oldStr := b.dynstr()
	if !bytes.Equal(strtab[:len(oldStr)], oldStr) {
		t.Error("new .dynstr does not start with the old one")
	}
	if len(dyn) != len(b.Dynamic)+1 && !(b.PIE && len(dyn) == len(b.Dynamic)+4) {
		t.Errorf("%d dynamic entries, had %d", len(dyn), len(b.Dynamic))
	}
	for i, e := range b.Dynamic {
		if i+1 >= len(dyn) {
			break
		}
		g := dyn[i+1]
		if g.Tag != e.Tag {
			t.Errorf("dynamic entry %d: tag %v, was %v", i, g.Tag, e.Tag)
			continue
		}
		switch {
		case e.Tag == elf.DT_STRTAB || e.Tag == elf.DT_STRSZ:
		case b.PIE && (e.Tag == elf.DT_RELA || e.Tag == elf.DT_RELASZ):
		case b.PIE && e.Tag == elf.DT_RELACOUNT:
			if g.Val != e.Val+entrySlots {
				t.Errorf("DT_RELACOUNT = %d, was %d; the slots' relocations lead the table", g.Val, e.Val)
			}
		case g.Val != e.Val:
			t.Errorf("dynamic entry %v: %#x, was %#x", e.Tag, g.Val, e.Val)
		}
		if e.Tag == elf.DT_NEEDED && rwCString(strtab, g.Val) != rwCString(oldStr, e.Val) {
			t.Errorf("DT_NEEDED %q became %q", rwCString(oldStr, e.Val), rwCString(strtab, g.Val))
		}
	}
	if strSize != uint64(len(oldStr)+len(NeededEntry)+1) {
		t.Errorf("DT_STRSZ = %d, want %d", strSize, len(oldStr)+len(NeededEntry)+1)
	}
	oldRela, _ := b.DynVal(elf.DT_RELA)
	oldRelaSz, _ := b.DynVal(elf.DT_RELASZ)
	if b.PIE {
		relaAddr, relaSize := val(elf.DT_RELA), val(elf.DT_RELASZ)
		if relaSize != oldRelaSz+entrySlots*24 {
			t.Errorf("DT_RELASZ = %d, want %d + %d", relaSize, oldRelaSz, entrySlots*24)
		}
		// The slots' RELATIVE entries come first (IRELATIVE resolvers run
		// while the loader walks the table), then the old entries.
		rela := rwVRead(t, f, out, relaAddr, relaSize)
		if !bytes.Equal(rela[entrySlots*24:], b.relaDyn()) {
			t.Error("new .rela.dyn does not continue with the old entries")
		}
		for i, slot := range []uint64{l.SlotAccess(), l.SlotRange(), l.SlotBatch()} {
			r := rela[i*24:]
			if le.Uint64(r) != slot || elf.R_X86_64(le.Uint64(r[8:])) != elf.R_X86_64_RELATIVE || le.Uint64(r[16:]) != l.TextAddr {
				t.Errorf("relocation %d for slot %#x: %x", i, slot, r[:24])
			}
		}
		if ent := val(elf.DT_RELAENT); ent != 24 {
			t.Errorf("DT_RELAENT = %d", ent)
		}
	} else if oldRelaSz != 0 && (val(elf.DT_RELA) != oldRela || val(elf.DT_RELASZ) != oldRelaSz) {
		t.Error("non-PIE DT_RELA/DT_RELASZ changed")
	}

	// CET bits.
	if s := f.Section(".note.gnu.property"); s != nil {
		before, _ := rwX86Feature1(b.SectionData(in.Section(".note.gnu.property")))
		nd, err := s.Data()
		if err != nil {
			t.Fatal(err)
		}
		after, ok := rwX86Feature1(nd)
		t.Logf("X86_FEATURE_1_AND %#x -> %#x", before, after)
		if ok && after&3 != 0 {
			t.Errorf("IBT/SHSTK bits still set: %#x", after)
		}
		if ok && after != before&^3 {
			t.Errorf("other feature bits changed: %#x -> %#x", before, after)
		}
	}

	// Section headers of .dynamic, .dynstr and (PIE) .rela.dyn describe the
	// new copies; every other section header is unchanged.
	shoff := le.Uint64(b.Data[rwOffShoff:])
	for i, s := range in.Sections {
		h := int(shoff) + i*64
		got, was := out[h:h+64], b.Data[h:h+64]
		var wantAddr, wantSize uint64
		switch {
		case s.Type == elf.SHT_DYNAMIC:
			wantAddr, wantSize = l.dynAddr, l.dynSize
		case s.Name == ".dynstr":
			wantAddr, wantSize = strAddr, strSize
		case b.PIE && s.Type == elf.SHT_RELA && s.Addr == oldRela && oldRela != 0:
			wantAddr, wantSize = val(elf.DT_RELA), val(elf.DT_RELASZ)
		default:
			if !bytes.Equal(got, was) {
				t.Errorf("section header %d (%s) changed", i, s.Name)
			}
			continue
		}
		ns := f.Sections[i]
		if ns.Addr != wantAddr || ns.Size != wantSize || ns.Offset != data.Off+wantAddr-data.Vaddr {
			t.Errorf("section %s: addr %#x size %#x offset %#x; want the new copy at %#x size %#x", s.Name, ns.Addr, ns.Size, ns.Offset, wantAddr, wantSize)
		}
		if ns.Name != s.Name || ns.Type != s.Type || ns.Flags != s.Flags || ns.Link != s.Link || ns.Entsize != s.Entsize {
			t.Errorf("section %s: other header fields changed", s.Name)
		}
	}
	if s := f.Section(".dynamic"); s != nil {
		raw, err := s.Data()
		if err != nil || len(rwDynEntries(raw)) != len(dyn) {
			t.Errorf(".dynamic section data: %d entries, %v; want %d", len(rwDynEntries(raw)), err, len(dyn))
		}
	}

	// Everything outside the note, the program and section header tables
	// and the new segments is unchanged.
	prefix := slices.Clone(out[:len(b.Data)])
	if n := uint64(len(in.Sections)) * 64; shoff != 0 && shoff+n <= uint64(len(prefix)) {
		copy(prefix[shoff:], b.Data[shoff:shoff+n])
	}
	if !wantMoved {
		copy(prefix[phoff:], b.Data[phoff:phoff+phnum*phdrSize])
	} else {
		copy(prefix[rwOffPhoff:], b.Data[rwOffPhoff:rwOffPhoff+8])
		copy(prefix[rwOffPhnum:], b.Data[rwOffPhnum:rwOffPhnum+2])
	}
	if s := in.Section(".note.gnu.property"); s != nil {
		copy(prefix[s.Offset:], b.Data[s.Offset:s.Offset+s.Size])
	}
	if !bytes.Equal(prefix, b.Data) {
		t.Error("bytes of the original image changed outside the program headers and the property note")
	}
	return f
}

// rwRunBoth runs the original and the rewritten program (beside a dummy
// libhgrt.so) and compares stdout and exit status.
func rwRunBoth(t *testing.T, dir, orig string, out []byte) {
	t.Helper()
	rwBuild(t, dir, RuntimeLibName, "int hgrt_dummy_symbol;\n", "-shared", "-fPIC")
	rewritten := filepath.Join(dir, "rewritten")
	if err := os.WriteFile(rewritten, out, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(rewritten, 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(path string) (string, int, string, error) {
		var stdout, stderr bytes.Buffer
		var err error
		// ETXTBSY: a test running in parallel forked while the file
		// was still open for writing, and its child holds the
		// descriptor until it execs (Go issue 22315); it goes away.
		for try := 0; try < 50; try++ {
			stdout.Reset()
			stderr.Reset()
			cmd := exec.Command(path, "arg")
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err = cmd.Run(); !errors.Is(err, syscall.ETXTBSY) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code, err = ee.ExitCode(), nil
		}
		return stdout.String(), code, stderr.String(), err
	}
	wantOut, wantCode, _, err := run(orig)
	if err != nil {
		t.Skipf("cannot run programs from the temporary directory (noexec mount?): %v", err)
	}
	gotOut, gotCode, gotErr, err := run(rewritten)
	if err != nil {
		t.Fatalf("the kernel refuses to run the rewritten program: %v", err)
	}
	if gotOut != wantOut || gotCode != wantCode {
		t.Errorf("rewritten program: exit %d, stdout %q, stderr %q; original: exit %d, stdout %q",
			gotCode, gotOut, gotErr, wantCode, wantOut)
	}
	if wantCode == -1 || wantOut == "" {
		t.Errorf("original program did not run normally: exit %d, stdout %q", wantCode, wantOut)
	}
	t.Logf("rewritten program: exit %d, stdout %q", gotCode, gotOut)

	// readelf, which reads the section headers, sees the new dynamic
	// section too.
	if _, err := exec.LookPath("readelf"); err == nil {
		d, err := exec.Command("readelf", "-dW", rewritten).CombinedOutput()
		if err != nil || !strings.Contains(string(d), "Shared library: ["+NeededEntry+"]") || strings.Contains(string(d), "Warning") {
			t.Errorf("readelf -dW on the rewritten program (%v):\n%s", err, d)
		}
	}

	// The loader really loaded the dummy runtime from $ORIGIN.
	cmd := exec.Command(rewritten)
	cmd.Env = append(os.Environ(), "LD_TRACE_LOADED_OBJECTS=1")
	trace, err := cmd.Output()
	if err != nil {
		t.Fatalf("LD_TRACE_LOADED_OBJECTS=1 %s: %v", rewritten, err)
	}
	if !strings.Contains(string(trace), filepath.Join(dir, RuntimeLibName)) {
		t.Errorf("the loader did not load %s:\n%s", filepath.Join(dir, RuntimeLibName), trace)
	}
}

// rwNullNotes turns all but keep PT_NOTE/PT_GNU_PROPERTY entries of an image
// into PT_NULL.
func rwNullNotes(data []byte, keep int) []byte {
	out := slices.Clone(data)
	phnum := int(binary.LittleEndian.Uint16(out[rwOffPhnum:]))
	for i := 0; i < phnum; i++ {
		o := rwProgOffset(out, i)
		typ := elf.ProgType(binary.LittleEndian.Uint32(out[o:]))
		if typ != elf.PT_NOTE && typ != elf.PT_GNU_PROPERTY {
			continue
		}
		if keep > 0 && typ == elf.PT_NOTE {
			keep--
			continue
		}
		binary.LittleEndian.PutUint32(out[o:], uint32(elf.PT_NULL))
	}
	return out
}

func TestWriteRealProgram(t *testing.T) {
	rwNeedGCC(t)
	const discardProperty = "SECTIONS { /DISCARD/ : { *(.note.gnu.property) } } INSERT AFTER .text;\n"
	const discardNotes = "SECTIONS { /DISCARD/ : { *(.note.gnu.property) *(.note.ABI-tag) } } INSERT AFTER .text;\n"
	cet := []string{"-fcf-protection=full", "-Wl,-z,ibt,-z,shstk"}
	configs := []struct {
		name    string
		flags   []string
		script  string // linker script fragment, if any
		nullOut int    // if >= 0 after build: keep this many PT_NOTEs, null the rest (in memory)
		moved   bool
		cetBits bool
		noShdrs bool // drop the section header table (as strip --strip-section-headers does)
	}{
		{name: "pie", flags: []string{"-O2", "-fPIE", "-pie"}, nullOut: -1},
		{name: "nopie", flags: []string{"-O2", "-fno-pie", "-no-pie"}, nullOut: -1},
		{name: "pie-O0-now", flags: []string{"-O0", "-fPIE", "-pie", "-Wl,-z,now"}, nullOut: -1},
		{name: "pie-cf-protection", flags: []string{"-O2", "-fPIE", "-pie", "-fcf-protection=full"}, nullOut: -1},
		{name: "pie-cet", flags: append([]string{"-O2", "-fPIE", "-pie"}, cet...), nullOut: -1, cetBits: true},
		{name: "nopie-cet", flags: append([]string{"-O2", "-fno-pie", "-no-pie"}, cet...), nullOut: -1, cetBits: true},
		{name: "pie-noplt", flags: []string{"-O2", "-fPIE", "-pie", "-fno-plt"}, nullOut: -1},
		{name: "moved-pie-one-note", flags: []string{"-O2", "-fPIE", "-pie", "-Wl,--build-id=none"}, script: discardProperty, nullOut: -1, moved: true},
		{name: "moved-nopie-one-note", flags: []string{"-O2", "-fno-pie", "-no-pie", "-Wl,--build-id=none"}, script: discardProperty, nullOut: -1, moved: true},
		{name: "moved-pie-no-notes", flags: []string{"-O2", "-fPIE", "-pie", "-Wl,--build-id=none"}, script: discardNotes, nullOut: -1, moved: true},
		{name: "moved-pie-nulled", flags: []string{"-O2", "-fPIE", "-pie"}, nullOut: 1, moved: true},
		{name: "moved-nopie-nulled", flags: []string{"-O2", "-fno-pie", "-no-pie"}, nullOut: 1, moved: true},
		{name: "moved-pie-cet-nulled", flags: append([]string{"-O2", "-fPIE", "-pie"}, cet...), nullOut: 1, moved: true, cetBits: true},
		{name: "pie-no-section-headers", flags: []string{"-O2", "-fPIE", "-pie"}, nullOut: -1, noShdrs: true},
		{name: "nopie-no-section-headers", flags: []string{"-O2", "-fno-pie", "-no-pie"}, nullOut: -1, noShdrs: true},
		{name: "moved-pie-no-section-headers", flags: []string{"-O2", "-fPIE", "-pie"}, nullOut: 1, moved: true, noShdrs: true},
	}
	for _, cfg := range configs {
		t.Run(cfg.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			flags := append([]string{"-pthread"}, cfg.flags...)
			if cfg.script != "" {
				if err := os.WriteFile(filepath.Join(dir, "notes.ld"), []byte(cfg.script), 0o644); err != nil {
					t.Fatal(err)
				}
				flags = append(flags, "-Wl,-T,notes.ld")
			}
			bin, err := rwTryBuild(dir, "prog", rwTestProgram, flags...)
			if err != nil && cfg.script != "" {
				// Fall back to nulling program headers in memory.
				t.Logf("linker script not accepted, nulling PT_NOTEs instead: %v", err)
				bin = rwBuild(t, dir, "prog", rwTestProgram, append([]string{"-pthread"}, cfg.flags...)...)
				cfg.nullOut = 1
			} else if err != nil {
				t.Fatal(err)
			}
			if cfg.script != "" && cfg.nullOut < 0 {
				if out, err := exec.Command("readelf", "-lW", bin).Output(); err == nil {
					t.Logf("NOTE program headers: %d", strings.Count(string(out), " NOTE "))
				}
			}
			data := rwReadFile(t, bin)
			if cfg.noShdrs {
				data = rwPatch(data, rwOffShoff, 8, 0)
				data = rwPatch(data, rwOffShnum, 2, 0)
				data = rwPatch(data, rwOffShstrnd, 2, 0)
			}
			if cfg.nullOut >= 0 || cfg.noShdrs {
				if cfg.nullOut >= 0 {
					data = rwNullNotes(data, cfg.nullOut)
				}
				// The original must still run with the edited headers.
				bin = filepath.Join(dir, "prog-nulled")
				if err := os.WriteFile(bin, data, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			b, err := Parse(data)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if cfg.cetBits {
				v, ok := rwX86Feature1(b.SectionData(b.F.Section(".note.gnu.property")))
				if !ok || v&3 != 3 {
					t.Fatalf("input lacks IBT|SHSTK: %#x, %v", v, ok)
				}
			}
			l, out := rwRewrite(t, b)
			rwCheckRewritten(t, b, l, out, cfg.moved)
			if !t.Failed() {
				rwRunBoth(t, dir, bin, out)
			}
		})
	}
}

// TestWriteSynthetic covers both program header paths without a compiler.
func TestWriteSynthetic(t *testing.T) {
	for _, c := range []struct {
		name  string
		o     rwSynthOpts
		moved bool
	}{
		{"exec-in-place", rwSynthOpts{notes: 2, needed: []string{"libc.so.6"}}, false},
		{"exec-in-place-3-notes", rwSynthOpts{notes: 3, needed: []string{"libc.so.6"}}, false},
		{"exec-moved", rwSynthOpts{notes: 1, needed: []string{"libc.so.6"}}, true},
		{"dyn-in-place", rwSynthOpts{typ: elf.ET_DYN, notes: 2, needed: []string{"libc.so.6"}, rela: true}, false},
		{"dyn-moved", rwSynthOpts{typ: elf.ET_DYN, notes: 0, needed: []string{"libc.so.6"}, rela: true}, true},
		{"dyn-no-rela", rwSynthOpts{typ: elf.ET_DYN, notes: 2, needed: []string{"libc.so.6"}}, false},
		{"exec-no-needed", rwSynthOpts{notes: 2}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, err := Parse(rwSynth(c.o))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			l, out := rwRewrite(t, b)
			f := rwCheckRewritten(t, b, l, out, c.moved)
			if b.PIE {
				if _, ok := b.DynVal(elf.DT_RELA); !ok {
					// The writer must add DT_RELA, DT_RELASZ, DT_RELAENT.
					var tags []elf.DynTag
					for _, p := range f.Progs {
						if p.Type == elf.PT_DYNAMIC {
							for _, e := range rwDynEntries(rwVRead(t, f, out, p.Vaddr, p.Filesz)) {
								tags = append(tags, e.Tag)
							}
						}
					}
					for _, want := range []elf.DynTag{elf.DT_RELA, elf.DT_RELASZ, elf.DT_RELAENT} {
						if !slices.Contains(tags, want) {
							t.Errorf("added dynamic entries lack %v: %v", want, tags)
						}
					}
				}
			}
		})
	}
}

func TestWriteErrors(t *testing.T) {
	b, err := Parse(rwSynth(rwSynthOpts{notes: 2, needed: []string{"libc.so.6"}}))
	if err != nil {
		t.Fatal(err)
	}
	l, err := b.PlanLayout()
	if err != nil {
		t.Fatal(err)
	}
	// A patch outside any segment is refused.
	if _, err := b.Write(l, nil, 0, []CodePatch{{Addr: 0x10, Bytes: []byte{0x90}}}); err == nil {
		t.Error("Write accepted a patch at an unmapped address")
	}
	// A patch that runs past the end of the file is refused.
	end := b.Loads[len(b.Loads)-1]
	if _, err := b.Write(l, nil, 0, []CodePatch{{Addr: end.Vaddr + end.Filesz - 1, Bytes: []byte{1, 2}}}); err == nil {
		t.Error("Write accepted a patch past the end of the file")
	}
	// A patch is applied.
	out, err := b.Write(l, nil, 0, []CodePatch{{Addr: b.Entry, Bytes: []byte{0xcc, 0xcc}}})
	if err != nil {
		t.Fatal(err)
	}
	off, _ := b.Offset(b.Entry)
	if out[off] != 0xcc || out[off+1] != 0xcc || out[off+2] != b.Data[off+2] {
		t.Errorf("patch not applied: %x", out[off:off+3])
	}
	if b.Data[off] == 0xcc {
		t.Error("Write modified the input image")
	}

	// No DT_STRTAB: PlanLayout refuses.
	b, err = Parse(rwSynth(rwSynthOpts{notes: 2}))
	if err != nil {
		t.Fatal(err)
	}
	b.Dynamic = slices.DeleteFunc(b.Dynamic, func(e DynEntry) bool { return e.Tag == elf.DT_STRTAB })
	if _, err := b.PlanLayout(); err == nil || !strings.Contains(err.Error(), "dynamic string table") {
		t.Errorf("PlanLayout without DT_STRTAB: %v", err)
	}
	b, err = Parse(rwSynth(rwSynthOpts{notes: 2, noStrtab: true}))
	if err != nil {
		t.Fatal(err)
	}
	var e *Error
	if _, err := b.PlanLayout(); !errors.As(err, &e) {
		t.Errorf("PlanLayout without DT_STRTAB: %v, want *Error", err)
	}
}

// TestWriteNonPIETooHigh: a position-dependent program whose new code would
// be above 2 GiB is refused (trampolines use rel32 jumps).
func TestWriteNonPIETooHigh(t *testing.T) {
	data := rwSynth(rwSynthOpts{notes: 2, needed: []string{"libc.so.6"}})
	// Give the R+X PT_LOAD (index 3) a memory size reaching 2 GiB.
	o := rwProgOffset(data, 3)
	data = rwPatch(data, o+40, 8, 0x80000000-binary.LittleEndian.Uint64(data[o+16:]))
	b, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.PlanLayout()
	var e *Error
	if !errors.As(err, &e) || !strings.Contains(e.Msg, "2 GiB") {
		t.Errorf("PlanLayout = %v, want an *Error about 2 GiB", err)
	}
}

// TestWriteLargeBSSMovedHeaders documents how much file the moved program
// header path needs when a program has a large .bss: the data segment's file
// offset must equal its address minus the first PT_LOAD's bias, so the file
// grows by the size of the .bss (a 15 KB program with a 64 MiB static array
// becomes a 64 MiB file). The in-place path has no such cost.
func TestWriteLargeBSSMovedHeaders(t *testing.T) {
	data := rwSynth(rwSynthOpts{notes: 1, needed: []string{"libc.so.6"}})
	o := rwProgOffset(data, 3)
	const bss = 64 << 20
	data = rwPatch(data, o+40, 8, binary.LittleEndian.Uint64(data[o+40:])+bss)
	b, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	l, err := b.PlanLayout()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("input %d bytes with a %d MiB .bss: moved table puts the data segment at file offset %#x", len(data), bss>>20, l.DataOff)
	if !l.movePhdrs {
		t.Fatal("expected the moved program header table")
	}
	if first := b.Loads[0]; l.DataAddr-l.DataOff != first.Vaddr-first.Off {
		t.Errorf("data segment bias %#x, first PT_LOAD's %#x", l.DataAddr-l.DataOff, first.Vaddr-first.Off)
	}
	if l.DataAddr < b.Loads[1].Vaddr+b.Loads[1].Memsz {
		t.Errorf("data segment %#x overlaps the .bss", l.DataAddr)
	}
	// In-place layout keeps the file small.
	data2 := rwSynth(rwSynthOpts{notes: 2, needed: []string{"libc.so.6"}})
	o2 := rwProgOffset(data2, 3)
	data2 = rwPatch(data2, o2+40, 8, binary.LittleEndian.Uint64(data2[o2+40:])+bss)
	b2, err := Parse(data2)
	if err != nil {
		t.Fatal(err)
	}
	l2, err := b2.PlanLayout()
	if err != nil {
		t.Fatal(err)
	}
	if l2.DataOff > uint64(len(data2))+2*pageSize {
		t.Errorf("in-place layout puts the data segment at %#x for a %d-byte input", l2.DataOff, len(data2))
	}
	if l2.DataAddr < b2.Loads[1].Vaddr+b2.Loads[1].Memsz {
		t.Errorf("data segment %#x overlaps the .bss", l2.DataAddr)
	}
}
