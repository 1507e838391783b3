package abi_test

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"hgrewrite/abi"
	"hgrewrite/msm"
	"hgrewrite/runtime/detect"
	"hgrewrite/shadow"
)

var update = flag.Bool("update", false, "rewrite runtime/hgabi.h from the Go constants")

const headerPath = "../runtime/hgabi.h"

// define is one #define of the generated header.
type define struct {
	name    string
	value   string
	comment string
}

func num(name string, v uint64, comment string) define {
	return define{name, fmt.Sprintf("%d", v), comment}
}

func hex(name string, v uint64, comment string) define {
	return define{name, fmt.Sprintf("0x%xull", v), comment}
}

// defines lists what the C side needs, in the order the header shows it.
func defines() [][]define {
	header := []define{
		{"HG_MAGIC", fmt.Sprintf("%q", abi.HeaderMagic), "the runtime header (struct hg_header in hgrt.h)"},
		num("HG_VERSION", abi.HeaderVersion, ""),
		num("HG_HEADER_SIZE", abi.HeaderSize, ""),
		num("HG_HDR_OFF_VERSION", abi.HdrOffVersion, ""),
		num("HG_HDR_OFF_FLAGS", abi.HdrOffFlags, ""),
		num("HG_HDR_OFF_TEXT_ADDR", abi.HdrOffTextAddr, ""),
		num("HG_HDR_OFF_TEXT_SIZE", abi.HdrOffTextSize, ""),
		num("HG_HDR_OFF_SLOT_ACCESS", abi.HdrOffSlotAccess, ""),
		num("HG_HDR_OFF_SLOT_RANGE", abi.HdrOffSlotRange, ""),
		num("HG_HDR_OFF_SLOT_BATCH", abi.HdrOffSlotBatch, ""),
		num("HG_HDR_OFF_SLOT_TRACE", abi.HdrOffSlotTrace, ""),
		num("HG_FLAG_PIE", abi.HdrFlagPIE, ""),
		num("HG_FLAG_NO_VEX", abi.HdrFlagNoVEX, ""),
		num("HG_FLAG_NO_EVEX", abi.HdrFlagNoEVEX, ""),
		num("HG_TRAMPOLINE_SAVED", abi.TrampolineSaved, "bytes a trampoline's rsp is below the program's at its call, at most"),
		num("HG_TRACE_HEADER", abi.TraceHeader, "the call trace of function entries (abi: one ring per thread)"),
		num("HG_TRACE_BYTES", abi.TraceBytes, ""),
		num("HG_TRACE_ENTRY", abi.TraceEntry, ""),
		hex("HG_TRACE_MARK_EPOCH", abi.TraceMarkEpoch, ""),
		hex("HG_TRACE_MARK_RESET", abi.TraceMarkReset, ""),
		define{"HG_EVENT_LEN_SP", "(1ull << 63)", "a plain access event's len: the program's rsp at the access"},
	}
	info := []define{
		num("HG_INFO_SIZE_SHIFT", abi.InfoSizeShift, "the info word: pc (low 32) | size << 32 | flags << 48"),
		num("HG_INFO_FLAGS_SHIFT", abi.InfoFlagsShift, ""),
		num("HG_READ", abi.Read, "info word flags"),
		num("HG_WRITE", abi.Write, ""),
		num("HG_ATOMIC", abi.Atomic, ""),
		num("HG_POST", abi.Post, ""),
		num("HG_ALLOC", abi.Alloc, ""),
		num("HG_FREE", abi.Free, ""),
		num("HG_LOCK", abi.Lock, ""),
		num("HG_UNLOCK", abi.Unlock, ""),
		num("HG_RESET_DONE", abi.ResetDone, ""),
		num("HG_SPIN", abi.Spin, ""),
		num("HG_HOOK", abi.Hook, ""),
		num("HG_ORDERED", abi.Ordered, ""),
		num("HG_SPIN_STATIC", abi.SpinStatic, ""),
		num("HG_SIGNAL", abi.Signal, ""),
		num("HG_WAITDONE", abi.WaitDone, ""),
		num("HG_HOOK_WAIT", abi.HookWait, "loop-hook kinds, in the size field"),
		num("HG_HOOK_EXIT", abi.HookExit, ""),
		num("HG_HOOK_LOCK", abi.HookLock, ""),
		num("HG_HOOK_DEREF", abi.HookDeref, ""),
		num("HG_HOOK_ANNOTATE", abi.HookAnnotate, ""),
		num("HG_HOOK_REQUEST", abi.HookRequest, ""),
		num("HG_ANN_HAPPENS_BEFORE", abi.AnnHappensBefore, "dynamic annotations, in the pc field of HG_HOOK_ANNOTATE"),
		num("HG_ANN_HAPPENS_AFTER", abi.AnnHappensAfter, ""),
		num("HG_ANN_BENIGN_RACE_SIZED", abi.AnnBenignRaceSized, ""),
		num("HG_ANN_BENIGN_RACE", abi.AnnBenignRace, ""),
		num("HG_ANN_IGNORE_READS_BEGIN", abi.AnnIgnoreReadsBeg, ""),
		num("HG_ANN_IGNORE_READS_END", abi.AnnIgnoreReadsEnd, ""),
		num("HG_ANN_IGNORE_WRITES_BEGIN", abi.AnnIgnoreWritesBeg, ""),
		num("HG_ANN_IGNORE_WRITES_END", abi.AnnIgnoreWritesEnd, ""),
		num("HG_ANN_RWLOCK_ACQUIRED", abi.AnnRWLockAcquired, ""),
		num("HG_ANN_RWLOCK_RELEASED", abi.AnnRWLockReleased, ""),
		num("HG_ANN_NEW_MEMORY", abi.AnnNewMemory, ""),
		num("HG_ANN_CONDVAR_SIGNAL", abi.AnnCondVarSignal, ""),
		num("HG_ANN_CONDVAR_WAIT", abi.AnnCondVarWait, ""),
		num("HG_WAIT_IN_LOOP", abi.WaitInLoop, "the len of HG_WAITDONE"),
		num("HG_WAIT_WOKE", abi.WaitWoke, ""),
		num("HG_SIGNAL_AT_END", abi.SignalAtEnd, "the len of HG_SIGNAL"),
		num("HG_ACQUIRE_KNOWN", abi.AcquireKnown, "the len of an HG_ATOMIC event"),
		num("HG_RELEASE_KNOWN", abi.ReleaseKnown, ""),
		num("HG_CLOCK_RAISE", abi.ClockRaise, ""),
		num("HG_TICKS_SHIFT", abi.TicksShift, ""),
		num("HG_SYNC_KNOWN", abi.SyncKnown, "entries of a record's acquired objects"),
		num("HG_SYNC_SMALL", abi.SyncSmall, "components of a release-stamp slot's clock"),
		num("HG_SYNC_SMALL_VALID", abi.SyncSmallValid, ""),
		num("HG_SYNC_SMALL_C", abi.SyncSmallC, ""),
		num("HG_LOCK_READ", abi.LockRead, "the len of HG_LOCK and HG_UNLOCK"),
		num("HG_LOCK_WAIT", abi.LockWait, ""),
		num("HG_LOCK_CVM", abi.LockCVM, ""),
		num("HG_LOCK_BEGIN", abi.LockBegin, ""),
		num("HG_LOCK_END", abi.LockEnd, ""),
		num("HG_LOCK_RECORD", abi.LockRecord, ""),
		num("HG_LOCK_NESTED", abi.LockNested, ""),
		num("HG_LOCK_READS_FULL", abi.LockReadsFull, ""),
		num("HG_LOCK_TRY", abi.LockTry, ""),
		num("HG_LOCK_ORDER", abi.LockOrder, ""),
		num("HG_LOCK_DESTROY", abi.LockDestroy, ""),
		num("HG_LOCK_TICKED", abi.LockTicked, ""),
		num("HG_LOCK_WAITED_C", abi.LockWaitedC, ""),
		num("HG_LOCK_WRITES_FULL", abi.LockWritesFull, ""),
		num("HG_LOCK_MARK_SHIFT", abi.LockMarkShift, ""),
		num("HG_LOCKSTEP_WRITE", abi.LockStepWrite, "lockset changes the Go side tells the C side of (lockview.c)"),
		num("HG_LOCKSTEP_READ", abi.LockStepRead, ""),
		num("HG_LOCKSTEP_UNLOCK", abi.LockStepUnlock, ""),
		num("HG_MAX_THREADS", abi.MaxThreads, ""),
		num("HG_RL_WAYS", detect.ReadLogWays, "the reader log of reverse hand-offs (runtime/detect/readlog.go)"),
		num("HG_RL_KEYS", detect.ReadLogKeys, ""),
		hex("HG_RL_ALL", detect.ReadLogAll, ""),
		num("HG_HANDOFF_IN_HEAP", detect.HandoffInHeap, "a hand-off table the fast path cannot read: every look-up is news"),
	}
	cell := []define{
		num("SH_GRANULE_SHIFT", shadow.GranuleShift, "shadow memory (package shadow)"),
		num("SH_CELL_WORDS", shadow.CellWords, ""),
		num("SH_CELL_BYTES", shadow.CellBytes, ""),
		num("SH_CHUNK_SHIFT", shadow.ChunkShift, ""),
		hex("SH_SPLIT_RESERVE", shadow.SplitReserve, "the side cells' reservation (shadow.Memory.SplitBase)"),
		hex("SH_MAX_ADDR", shadow.MaxAddr, ""),
		num("SH_STATE_SHIFT", shadow.StateShift, "cell word 0: state | tid | touched mask | clock"),
		num("SH_TID_SHIFT", shadow.CellTIDShift, ""),
		num("SH_TOUCHED_SHIFT", shadow.TouchedShift, ""),
		hex("SH_TOUCHED_MASK", shadow.TouchedMask, ""),
		num("SH_ACCESS_PC_BITS", shadow.AccessPCBits, "cell words 2 and 3: an access, pc | tid | flags | log2 size | lockset"),
		num("SH_ACCESS_TID_SHIFT", shadow.AccessTIDShift, ""),
		num("SH_ACCESS_FLAG_SHIFT", shadow.AccessFlagShift, ""),
		num("SH_ACCESS_SIZE_SHIFT", shadow.AccessSizeShift, ""),
		num("SH_ACCESS_OFF_SHIFT", shadow.AccessOffShift, ""),
		num("SH_ACCESS_LOCKS_SHIFT", shadow.AccessLocksShift, ""),
		num("SH_ACCESS_LOCKS_UNKNOWN", shadow.AccessLocksUnknown, ""),
		num("SH_ACCESS_PART_BIT", shadow.AccessPartBit, "the size field holds the number of the granule's bytes covered, less one (shadow.PackAccessBytes)"),
		num("SH_EXCL_READ", uint64(msm.ExclRead), "msm.ExclRead"),
		num("SH_EXCL_WRITE", uint64(msm.ExclWrite), "msm.ExclWrite"),
		num("SH_SHARED_READ", uint64(msm.SharedRead), "msm.SharedRead"),
		num("SH_SHARED_MODIFIED", uint64(msm.SharedModified), "msm.SharedModified (MSM-short)"),
		num("SH_SHARED_MODIFIED1", uint64(msm.SharedModified1), "msm.SharedModified1 (MSM-long)"),
		num("SH_SHARED_MODIFIED2", uint64(msm.SharedModified2), "msm.SharedModified2 (MSM-long)"),
		hex("SH_ANY_LOCKS", uint64(msm.AnyLocks), "msm.AnyLocks: E_d of an owner with no access in its segment yet"),
		num("SH_LOCKSET_MIRROR_WORDS", shadow.MirrorWords, "words per lockset id in the fast path's copy of the locksets (shadow.Locksets.SetMirror)"),
		num("SH_SYNC", uint64(msm.Spin), "msm.Spin: a synchronisation variable (runtime/detect, markSync)"),
		num("SH_NEW", uint64(msm.New), "msm.New: never accessed since the last reset"),
		num("SH_RACE", uint64(msm.Race), "msm.Race"),
		num("SH_SPLIT", shadow.StateSplit, "a split granule (shadow/split.go)"),
	}
	return [][]define{header, info, cell}
}

// render writes the header text.
func render() string {
	var b strings.Builder
	b.WriteString("/* hgabi.h: generated by `go test ./abi -update` from package abi and\n" +
		" * package shadow's cell layout. Do not edit; TestCHeader fails when this\n" +
		" * file and the Go constants disagree. */\n" +
		"#ifndef HGABI_H\n#define HGABI_H\n")
	for _, group := range defines() {
		b.WriteString("\n")
		for _, d := range group {
			if d.comment != "" {
				fmt.Fprintf(&b, "/* %s */\n", d.comment)
			}
			fmt.Fprintf(&b, "#define %s %s\n", d.name, d.value)
		}
	}
	b.WriteString("#endif\n")
	return b.String()
}

// TestCHeader checks that runtime/hgabi.h is what the Go constants say.
func TestCHeader(t *testing.T) {
	want := render()
	if *update {
		if err := os.WriteFile(headerPath, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(headerPath)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("%s is out of date: run `go test ./abi -update`", headerPath)
	}
}

// TestInfo checks that Info and SplitInfo are inverses.
func TestInfo(t *testing.T) {
	w := abi.Info(0x1234_5678_9abc, 8, abi.Write|abi.Atomic)
	pc, size, flags := abi.SplitInfo(w)
	if pc != 0x5678_9abc || size != 8 || flags != abi.Write|abi.Atomic {
		t.Fatalf("SplitInfo(%#x) = %#x, %d, %#x", w, pc, size, flags)
	}
}
