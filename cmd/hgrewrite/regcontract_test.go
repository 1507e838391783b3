package main

import (
	"debug/elf"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/arch/x86/x86asm"
)

// TestRuntimeRegisterContracts checks how the runtime's C functions were
// compiled: one that saves r10 or r11 in its prologue keeps registers its
// callers need not keep, which only a function declared
// no_caller_saved_registers (HG_SLOW, HG_FAST) or an assembly stub
// (HG_STUB) does. On 2026-11-27 one function in fastpath.c without the
// file's target("general-regs-only") made GCC 12 compile the functions
// after it that way, and call hg_own_move, which clobbers r10, as if it
// kept it: the verdict corpus died of segmentation faults. The same
// mistake on a rarer path would crash programs only now and then.
// HG_TEST_LIB=path checks another build of the library (another compiler).
func TestRuntimeRegisterContracts(t *testing.T) {
	declared := callerSavingFunctions(t)
	lib := runtimeLib(t)
	if p := os.Getenv("HG_TEST_LIB"); p != "" {
		lib = p
	}
	f, err := elf.Open(lib)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	text := f.Section(".text")
	if text == nil {
		t.Fatal("no .text")
	}
	code, err := text.Data()
	if err != nil {
		t.Fatal(err)
	}
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || !strings.HasPrefix(s.Name, "hg_") ||
			s.Value < text.Addr || s.Value >= text.Addr+uint64(len(code)) {
			continue
		}
		checked++
		if savesScratch(code[s.Value-text.Addr:]) && !declared[s.Name] {
			t.Errorf("%s saves r10 or r11 in its prologue but is not declared no_caller_saved_registers: "+
				"its callers' register contract is not the one the compiler assumed elsewhere", s.Name)
		}
	}
	if checked < 50 {
		t.Fatalf("only %d runtime functions found in the library's symbols", checked)
	}
}

// savesScratch reports whether the prologue at code (its pushes, and the
// few instructions a compiler puts among them) pushes r10 or r11.
func savesScratch(code []byte) bool {
	for i, off := 0, 0; i < 24 && off < len(code); i++ {
		inst, err := x86asm.Decode(code[off:], 64)
		if err != nil {
			return false
		}
		off += inst.Len
		switch inst.Op {
		case x86asm.PUSH:
			if r, ok := inst.Args[0].(x86asm.Reg); ok && (r == x86asm.R10 || r == x86asm.R11) {
				return true
			}
		case x86asm.MOV, x86asm.LEA, x86asm.SHL, x86asm.SUB, x86asm.AND, x86asm.BTS:
		default:
			return false // the body begins
		}
	}
	return false
}

// callerSavingFunctions is the runtime's C functions that keep every
// register (no_caller_saved_registers: HG_SLOW, HG_FAST, or spelled out)
// and its assembly stubs (HG_STUB), read from the sources.
func callerSavingFunctions(t *testing.T) map[string]bool {
	files, err := filepath.Glob(filepath.Join(repoRoot(t), "runtime", "*.c"))
	if err != nil || len(files) == 0 {
		t.Fatalf("runtime sources: %v", err)
	}
	comment := regexp.MustCompile(`(?s)/\*.*?\*/`)
	define := regexp.MustCompile(`(?m)^#define[^\n]*`)
	marked := regexp.MustCompile(`(?s)(?:HG_SLOW|HG_FAST|no_caller_saved_registers)[^;{]*?\b(hg_\w+)\s*\(`)
	stub := regexp.MustCompile(`HG_STUB\((hg_\w+),`)
	names := map[string]bool{}
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		code := define.ReplaceAllString(comment.ReplaceAllString(string(src), ""), "")
		for _, m := range stub.FindAllStringSubmatch(code, -1) {
			names[m[1]] = true
		}
		for _, m := range marked.FindAllStringSubmatch(code, -1) {
			names[m[1]] = true
		}
	}
	return names
}
