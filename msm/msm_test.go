package msm

import (
	"strings"
	"testing"
)

// stubEnv answers the happens-before question with a fixed value and
// represents locksets and threadsets as bit masks: lockset bit i is lock i,
// threadset bit t is thread t. An epoch's thread is in its upper 32 bits.
type stubEnv struct {
	hb      bool
	hbCalls int
}

func (e *stubEnv) HappensBefore(prior Epoch, cur Access) bool { e.hbCalls++; return e.hb }
func (e *stubEnv) Intersect(a, b LocksetID) LocksetID         { return a & b }
func (e *stubEnv) ThreadOf(p Epoch) ThreadID                  { return ThreadID(p >> 32) }
func (e *stubEnv) Pair(a, b ThreadID) ThreadsetID             { return 1<<a | 1<<b }
func (e *stubEnv) AddThread(s ThreadsetID, t ThreadID) ThreadsetID {
	return s | 1<<t
}

func ep(t ThreadID, n uint32) Epoch { return Epoch(uint64(t)<<32 | uint64(n)) }

const (
	lA LocksetID = 1 // {a}
	lB LocksetID = 2 // {b}
	// The prior access is by thread 1 in segment prior; the current access
	// is by thread 2 in segment cur. Shared cells start with S_d = {1, 3}.
	t1, t2, t3             = ThreadID(1), ThreadID(2), ThreadID(3)
	s13        ThreadsetID = 1<<1 | 1<<3
	s123       ThreadsetID = s13 | 1<<2
	s12        ThreadsetID = 1<<1 | 1<<2
)

var (
	prior = ep(t1, 7)
	cur   = ep(t2, 5)
)

// row is one transition: start cell, access (read/write, TS_d ->hb TS_t or
// not, L_t), expected cell and race flag. hbAsked is the expected number of
// happens-before questions (-1: not checked).
type row struct {
	name    string
	m       Machine
	start   Cell
	write   bool
	hb      bool
	locks   LocksetID
	want    Cell
	race    bool
	hbAsked int
}

func runRows(t *testing.T, rows []row) {
	t.Helper()
	seen := map[string]bool{}
	for _, r := range rows {
		name := r.m.String() + "/" + r.start.State.String() + "/" + r.name
		if seen[name] {
			t.Fatalf("duplicate row name %q", name)
		}
		seen[name] = true
		t.Run(name, func(t *testing.T) {
			env := &stubEnv{hb: r.hb}
			a := Access{Write: r.write, Thread: t2, TS: cur, Locks: r.locks}
			got, race := Step(r.m, r.start, a, env)
			if got != r.want || race != r.race {
				t.Errorf("Step(%v, %+v, write=%v hb=%v L_t=%d)\n got  %+v race=%v\n want %+v race=%v",
					r.m, r.start, r.write, r.hb, r.locks, got, race, r.want, r.race)
			}
			if r.hbAsked >= 0 && env.hbCalls != r.hbAsked {
				t.Errorf("happens-before asked %d times, want %d", env.hbCalls, r.hbAsked)
			}
		})
	}
}

const anyCalls = -1

func TestLongTransitions(t *testing.T) {
	L := Long
	// The owner's lockset E_d is {a} (choice 13).
	exW := Cell{State: ExclWrite, TS: prior, Locks: lA}
	exR := Cell{State: ExclRead, TS: prior, Locks: lA}
	shR := Cell{State: SharedRead, TS: prior, Locks: lA, Threads: s13}
	sm1 := Cell{State: SharedModified1, TS: prior, Locks: lA, Threads: s13}
	exRW := Cell{State: ExclReadWrite, TS: prior, Threads: s13}
	sm2 := Cell{State: SharedModified2, TS: prior, Locks: lA, Threads: s13}
	rows := []row{
		// New: first read / write; E_d ← L_t.
		{"read", L, Cell{}, false, false, 0, Cell{State: ExclRead, TS: cur}, false, 0},
		{"write", L, Cell{}, true, false, lA, Cell{State: ExclWrite, TS: cur, Locks: lA}, false, 0},

		// Exclusive-Write.
		{"read hb", L, exW, false, true, 0, Cell{State: ExclRead, TS: cur}, false, 1},
		{"write hb", L, exW, true, true, lB, Cell{State: ExclWrite, TS: cur, Locks: lB}, false, 1},
		{"read par locked", L, exW, false, false, lA,
			Cell{State: SharedModified1, TS: prior, Locks: lA, Threads: s12}, false, 1},
		{"write par locked", L, exW, true, false, lA | lB,
			Cell{State: SharedModified1, TS: prior, Locks: lA, Threads: s12}, false, 1},
		{"write par other lock (choice 13)", L, exW, true, false, lB, Cell{State: Race, TS: prior, Locks: lA}, true, 1},
		{"read par unlocked", L, exW, false, false, 0, Cell{State: Race, TS: prior, Locks: lA}, true, 1},
		{"write par unlocked", L, exW, true, false, 0, Cell{State: Race, TS: prior, Locks: lA}, true, 1},

		// Exclusive-Read.
		{"read hb (choice 4)", L, exR, false, true, lB, Cell{State: ExclRead, TS: cur, Locks: lB}, false, 1},
		{"read par unlocked", L, exR, false, false, 0,
			Cell{State: SharedRead, TS: prior, Threads: s12}, false, 1},
		{"read par locked", L, exR, false, false, lA,
			Cell{State: SharedRead, TS: prior, Locks: lA, Threads: s12}, false, 1},
		{"write hb", L, exR, true, true, 0, Cell{State: ExclWrite, TS: cur}, false, 1},
		{"write par locked", L, exR, true, false, lA | lB,
			Cell{State: SharedModified1, TS: prior, Locks: lA, Threads: s12}, false, 1},
		{"write par other lock (choice 13)", L, exR, true, false, lB, Cell{State: Race, TS: prior, Locks: lA}, true, 1},
		{"write par unlocked", L, exR, true, false, 0, Cell{State: Race, TS: prior, Locks: lA}, true, 1},

		// Shared-Read: lockset only, never a happens-before question.
		{"read common lock", L, shR, false, false, lA | lB,
			Cell{State: SharedRead, TS: prior, Locks: lA, Threads: s123}, false, 0},
		{"read no lock", L, shR, false, true, 0,
			Cell{State: SharedRead, TS: prior, Threads: s123}, false, 0},
		{"write common lock", L, shR, true, false, lA,
			Cell{State: SharedModified1, TS: prior, Locks: lA, Threads: s123}, false, 0},
		{"write disjoint lock (choice 6)", L, shR, true, false, lB,
			Cell{State: ExclReadWrite, TS: cur, Threads: s123}, false, 0},
		{"write no lock", L, shR, true, true, 0,
			Cell{State: ExclReadWrite, TS: cur, Threads: s123}, false, 0},

		// Shared-Modified1: lockset only, never a happens-before question.
		{"read common lock", L, sm1, false, false, lA,
			Cell{State: SharedModified1, TS: prior, Locks: lA, Threads: s123}, false, 0},
		{"write common lock", L, sm1, true, false, lA | lB,
			Cell{State: SharedModified1, TS: prior, Locks: lA, Threads: s123}, false, 0},
		{"read disjoint lock", L, sm1, false, false, lB,
			Cell{State: ExclReadWrite, TS: cur, Threads: s123}, false, 0},
		{"write no lock", L, sm1, true, false, 0,
			Cell{State: ExclReadWrite, TS: cur, Threads: s123}, false, 0},

		// Exclusive-ReadWrite.
		{"read hb (choice 5)", L, exRW, false, true, lB,
			Cell{State: SharedRead, TS: prior, Locks: lB, Threads: s123}, false, 1},
		{"read hb unlocked (choice 5)", L, exRW, false, true, 0,
			Cell{State: SharedRead, TS: prior, Threads: s123}, false, 1},
		{"read par unlocked (choice 10)", L, exRW, false, false, 0,
			Cell{State: SharedModified2, TS: prior, Threads: s12}, false, 1},
		{"read par locked", L, exRW, false, false, lA,
			Cell{State: SharedModified2, TS: prior, Locks: lA, Threads: s12}, false, 1},
		{"write hb", L, exRW, true, true, 0,
			Cell{State: ExclReadWrite, TS: cur, Threads: s123}, false, 1},
		{"write par locked", L, exRW, true, false, lA,
			Cell{State: SharedModified2, TS: cur, Locks: lA, Threads: s12}, false, 1},
		{"write par unlocked", L, exRW, true, false, 0,
			Cell{State: Race, TS: prior, Threads: s13}, true, 1},

		// Shared-Modified2.
		{"read common lock", L, sm2, false, false, lA,
			Cell{State: SharedModified2, TS: prior, Locks: lA, Threads: s123}, false, 0},
		{"write common lock", L, sm2, true, false, lA | lB,
			Cell{State: SharedModified2, TS: prior, Locks: lA, Threads: s123}, false, 0},
		{"read empty hb", L, sm2, false, true, 0,
			Cell{State: ExclReadWrite, TS: cur, Threads: s123}, false, 1},
		{"write disjoint hb", L, sm2, true, true, lB,
			Cell{State: ExclReadWrite, TS: cur, Threads: s123}, false, 1},
		{"read empty par", L, sm2, false, false, 0,
			Cell{State: Race, TS: prior, Locks: lA, Threads: s13}, true, 1},
		{"write disjoint par", L, sm2, true, false, lB,
			Cell{State: Race, TS: prior, Locks: lA, Threads: s13}, true, 1},

		// Race and Spin are absorbing and silent.
		{"read", L, Cell{State: Race, TS: prior}, false, false, 0, Cell{State: Race, TS: prior}, false, 0},
		{"write", L, Cell{State: Race, TS: prior}, true, false, 0, Cell{State: Race, TS: prior}, false, 0},
		{"read", L, Cell{State: Spin}, false, false, 0, Cell{State: Spin}, false, 0},
		{"write", L, Cell{State: Spin}, true, false, 0, Cell{State: Spin}, false, 0},
	}
	runRows(t, rows)
}

func TestShortTransitions(t *testing.T) {
	S := Short
	// The owner's lockset E_d is {a} (choice 13).
	exW := Cell{State: ExclWrite, TS: prior, Locks: lA}
	exR := Cell{State: ExclRead, TS: prior, Locks: lA}
	shR := Cell{State: SharedRead, TS: prior, Locks: lA, Threads: s13}
	shM := Cell{State: SharedModified, TS: prior, Locks: lA, Threads: s13}
	rows := []row{
		// New; E_d ← L_t.
		{"read", S, Cell{}, false, false, lA, Cell{State: ExclRead, TS: cur, Locks: lA}, false, 0},
		{"write", S, Cell{}, true, false, 0, Cell{State: ExclWrite, TS: cur}, false, 0},

		// Exclusive-Write.
		{"read hb", S, exW, false, true, 0, Cell{State: ExclRead, TS: cur}, false, 1},
		{"write hb", S, exW, true, true, 0, Cell{State: ExclWrite, TS: cur}, false, 1},
		{"read par locked", S, exW, false, false, lA,
			Cell{State: SharedModified, TS: cur, Locks: lA, Threads: s12}, false, 1},
		{"write par locked", S, exW, true, false, lA | lB,
			Cell{State: SharedModified, TS: cur, Locks: lA, Threads: s12}, false, 1},
		{"write par other lock (choice 13)", S, exW, true, false, lB, Cell{State: Race, TS: prior, Locks: lA}, true, 1},
		{"write same segment meets E_d (choice 13)", S, Cell{State: ExclWrite, TS: cur, Locks: lA | lB}, true, true, lB,
			Cell{State: ExclWrite, TS: cur, Locks: lB}, false, 1},
		{"read after the join meets nothing (AnyLocks)", S, Cell{State: ExclWrite, TS: cur, Locks: AnyLocks}, false, true, lB,
			Cell{State: ExclRead, TS: cur, Locks: lB}, false, 1},
		{"read par unlocked", S, exW, false, false, 0, Cell{State: Race, TS: prior, Locks: lA}, true, 1},
		{"write par unlocked", S, exW, true, false, 0, Cell{State: Race, TS: prior, Locks: lA}, true, 1},

		// Exclusive-Read.
		{"read hb (choice 4)", S, exR, false, true, 0, Cell{State: ExclRead, TS: cur}, false, 1},
		{"read par keeps TS_d (choice 3)", S, exR, false, false, 0,
			Cell{State: SharedRead, TS: prior, Threads: s12}, false, 1},
		{"read par locked", S, exR, false, false, lA,
			Cell{State: SharedRead, TS: prior, Locks: lA, Threads: s12}, false, 1},
		{"read par other lock (choice 13)", S, exR, false, false, lB,
			Cell{State: SharedRead, TS: prior, Threads: s12}, false, 1},
		{"write hb", S, exR, true, true, lA, Cell{State: ExclWrite, TS: cur, Locks: lA}, false, 1},
		{"write par locked", S, exR, true, false, lA,
			Cell{State: SharedModified, TS: cur, Locks: lA, Threads: s12}, false, 1},
		{"write par other lock (choice 13)", S, exR, true, false, lB, Cell{State: Race, TS: prior, Locks: lA}, true, 1},
		{"write par unlocked", S, exR, true, false, 0, Cell{State: Race, TS: prior, Locks: lA}, true, 1},

		// Shared-Read.
		{"read common lock", S, shR, false, false, lA,
			Cell{State: SharedRead, TS: prior, Locks: lA, Threads: s123}, false, 0},
		{"read disjoint lock", S, shR, false, false, lB,
			Cell{State: SharedRead, TS: prior, Threads: s123}, false, 0},
		{"write hb no lock (choice 2)", S, shR, true, true, 0,
			Cell{State: SharedModified, TS: cur, Threads: s123}, false, 1},
		{"write hb common lock", S, shR, true, true, lA,
			Cell{State: SharedModified, TS: cur, Locks: lA, Threads: s123}, false, anyCalls},
		{"write par common lock (choice 1)", S, shR, true, false, lA | lB,
			Cell{State: SharedModified, TS: cur, Locks: lA, Threads: s123}, false, anyCalls},
		{"write par disjoint lock (choice 1)", S, shR, true, false, lB,
			Cell{State: Race, TS: prior, Locks: lA, Threads: s13}, true, 1},
		{"write par no lock", S, shR, true, false, 0,
			Cell{State: Race, TS: prior, Locks: lA, Threads: s13}, true, 1},

		// Shared-Modified.
		{"read common lock", S, shM, false, false, lA,
			Cell{State: SharedModified, TS: prior, Locks: lA, Threads: s123}, false, 0},
		{"write common lock", S, shM, true, false, lA | lB, // TS_d follows the writes (package doc, choice 12)
			Cell{State: SharedModified, TS: cur, Locks: lA, Threads: s123}, false, 0},
		{"read empty hb", S, shM, false, true, 0, Cell{State: ExclRead, TS: cur}, false, 1},
		{"write disjoint hb", S, shM, true, true, lB, Cell{State: ExclWrite, TS: cur}, false, 1},
		{"read empty par", S, shM, false, false, 0,
			Cell{State: Race, TS: prior, Locks: lA, Threads: s13}, true, 1},
		{"write disjoint par", S, shM, true, false, lB,
			Cell{State: Race, TS: prior, Locks: lA, Threads: s13}, true, 1},

		// Race and Spin.
		{"read", S, Cell{State: Race, TS: prior}, false, false, 0, Cell{State: Race, TS: prior}, false, 0},
		{"write", S, Cell{State: Race, TS: prior}, true, false, 0, Cell{State: Race, TS: prior}, false, 0},
		{"read", S, Cell{State: Spin}, false, false, 0, Cell{State: Spin}, false, 0},
		{"write", S, Cell{State: Spin}, true, false, 0, Cell{State: Spin}, false, 0},
	}
	runRows(t, rows)
}

// Every (machine, state, read/write) combination is covered by the rows
// above; this checks that each state of each machine reaches every
// successor the pseudo-code allows, i.e. every edge of figures 5.1 and 5.4.
func TestEveryEdgeCovered(t *testing.T) {
	type edge struct {
		m        Machine
		from, to State
	}
	want := []edge{
		// Figure 5.1, MSM-long.
		{Long, New, ExclRead}, {Long, New, ExclWrite},
		{Long, ExclWrite, ExclWrite}, {Long, ExclWrite, ExclRead}, {Long, ExclWrite, SharedModified1}, {Long, ExclWrite, Race},
		{Long, ExclRead, ExclRead}, {Long, ExclRead, ExclWrite}, {Long, ExclRead, SharedRead}, {Long, ExclRead, SharedModified1}, {Long, ExclRead, Race},
		{Long, SharedRead, SharedRead}, {Long, SharedRead, SharedModified1}, {Long, SharedRead, ExclReadWrite},
		{Long, SharedModified1, SharedModified1}, {Long, SharedModified1, ExclReadWrite},
		{Long, ExclReadWrite, ExclReadWrite}, {Long, ExclReadWrite, SharedRead}, {Long, ExclReadWrite, SharedModified2}, {Long, ExclReadWrite, Race},
		{Long, SharedModified2, SharedModified2}, {Long, SharedModified2, ExclReadWrite}, {Long, SharedModified2, Race},
		{Long, Race, Race}, {Long, Spin, Spin},
		// Figure 5.4, MSM-short.
		{Short, New, ExclRead}, {Short, New, ExclWrite},
		{Short, ExclWrite, ExclWrite}, {Short, ExclWrite, ExclRead}, {Short, ExclWrite, SharedModified}, {Short, ExclWrite, Race},
		{Short, ExclRead, ExclRead}, {Short, ExclRead, ExclWrite}, {Short, ExclRead, SharedRead}, {Short, ExclRead, SharedModified}, {Short, ExclRead, Race},
		{Short, SharedRead, SharedRead}, {Short, SharedRead, SharedModified}, {Short, SharedRead, Race},
		{Short, SharedModified, SharedModified}, {Short, SharedModified, ExclRead}, {Short, SharedModified, ExclWrite}, {Short, SharedModified, Race},
		{Short, Race, Race}, {Short, Spin, Spin},
	}
	// Exhaustively step every state of each machine with every access kind
	// and collect the edges actually taken.
	got := map[edge]bool{}
	for _, m := range []Machine{Short, Long} {
		for s := New; s <= Spin; s++ {
			if !m.Has(s) {
				continue
			}
			for _, w := range []bool{false, true} {
				for _, hb := range []bool{false, true} {
					for _, cd := range []LocksetID{0, lA} {
						for _, lt := range []LocksetID{0, lA, lB} {
							c := Cell{State: s, TS: prior, Locks: cd, Threads: s13}
							if s == New {
								c = Cell{}
							}
							next, race := Step(m, c, Access{Write: w, Thread: t2, TS: cur, Locks: lt}, &stubEnv{hb: hb})
							if race != (next.State == Race && s != Race) {
								t.Errorf("%v %v: race flag %v entering %v", m, s, race, next.State)
							}
							if !m.Has(next.State) {
								t.Errorf("%v %v: left the machine to %v", m, s, next.State)
							}
							got[edge{m, s, next.State}] = true
						}
					}
				}
			}
		}
	}
	for _, e := range want {
		if !got[e] {
			t.Errorf("edge %v: %v -> %v never taken", e.m, e.from, e.to)
		}
		delete(got, e)
	}
	for e := range got {
		t.Errorf("edge %v: %v -> %v taken but not in the figure", e.m, e.from, e.to)
	}
}

func TestStepPanicsOnForeignState(t *testing.T) {
	cases := []struct {
		m Machine
		s State
	}{
		{Short, SharedModified1}, {Short, SharedModified2}, {Short, ExclReadWrite},
		{Long, SharedModified}, {Machine(9), New}, {Long, State(42)},
	}
	for _, c := range cases {
		func() {
			defer func() {
				r := recover()
				if r == nil {
					t.Errorf("Step(%v, %v) did not panic", c.m, c.s)
					return
				}
				if msg, _ := r.(string); !strings.Contains(msg, "is not a state of") {
					t.Errorf("Step(%v, %v) panicked with %v", c.m, c.s, r)
				}
			}()
			Step(c.m, Cell{State: c.s}, Access{}, &stubEnv{})
		}()
	}
}

func TestNames(t *testing.T) {
	want := map[State]string{
		New: "New", ExclRead: "Exclusive-Read", ExclWrite: "Exclusive-Write",
		ExclReadWrite: "Exclusive-ReadWrite", SharedRead: "Shared-Read",
		SharedModified: "Shared-Modified", SharedModified1: "Shared-Modified1",
		SharedModified2: "Shared-Modified2", Race: "Race", Spin: "Spin",
		State(10): "State(10)",
	}
	for s, n := range want {
		if s.String() != n {
			t.Errorf("State(%d).String() = %q, want %q", uint8(s), s.String(), n)
		}
	}
	if Short.String() != "MSM-short" || Long.String() != "MSM-long" || Machine(3).String() != "Machine(3)" {
		t.Errorf("machine names: %v %v %v", Short, Long, Machine(3))
	}
	// Six states for MSM-short, eight for MSM-long (plus Spin in both).
	for m, n := range map[Machine]int{Short: 6, Long: 8, Machine(3): 0} {
		k := 0
		for s := New; s < Spin; s++ {
			if m.Has(s) {
				k++
			}
		}
		if k != n {
			t.Errorf("%v has %d states, want %d", m, k, n)
		}
	}
	if Long.Has(State(12)) {
		t.Error("Long.Has(12)")
	}
}

func TestOnJoin(t *testing.T) {
	surv := ep(t3, 9)
	cases := []struct {
		name   string
		c      Cell
		single bool
		want   Cell
	}{
		{"Shared-Read single", Cell{State: SharedRead, TS: prior, Locks: lA, Threads: s13}, true,
			Cell{State: ExclRead, TS: surv, Locks: AnyLocks}},
		{"Shared-Modified single", Cell{State: SharedModified, TS: prior, Locks: lA, Threads: s13}, true,
			Cell{State: ExclWrite, TS: surv, Locks: AnyLocks}},
		{"Shared-Modified1 single", Cell{State: SharedModified1, TS: prior, Locks: lA, Threads: s13}, true,
			Cell{State: ExclWrite, TS: surv, Locks: AnyLocks}},
		{"Shared-Modified2 single", Cell{State: SharedModified2, TS: prior, Locks: lA, Threads: s13}, true,
			Cell{State: ExclWrite, TS: surv, Locks: AnyLocks}},
		{"Exclusive-ReadWrite single", Cell{State: ExclReadWrite, TS: prior, Threads: s13}, true,
			Cell{State: ExclWrite, TS: surv, Locks: AnyLocks}},
		{"Shared-Read several", Cell{State: SharedRead, TS: prior, Locks: lA, Threads: s123}, false,
			Cell{State: SharedRead, TS: prior, Locks: lA, Threads: s13}},
		{"Shared-Modified2 several", Cell{State: SharedModified2, TS: prior, Locks: lA, Threads: s123}, false,
			Cell{State: SharedModified2, TS: prior, Locks: lA, Threads: s13}},
		{"Exclusive-Write untouched", Cell{State: ExclWrite, TS: prior}, true, Cell{State: ExclWrite, TS: prior}},
		{"Exclusive-Read untouched", Cell{State: ExclRead, TS: prior}, true, Cell{State: ExclRead, TS: prior}},
		{"New untouched", Cell{}, true, Cell{}},
		{"Race untouched", Cell{State: Race, TS: prior, Threads: s13}, true, Cell{State: Race, TS: prior, Threads: s13}},
		{"Spin untouched", Cell{State: Spin}, true, Cell{State: Spin}},
	}
	for _, c := range cases {
		if got := OnJoin(c.c, s13, c.single, surv); got != c.want {
			t.Errorf("%s: OnJoin = %+v, want %+v", c.name, got, c.want)
		}
	}
}
