package msm

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
)

// This file replays the dissertation's example programs through both
// machines. fakeEnv keeps one vector clock per thread and per segment and
// updates them exactly as section 5.1 (and 3.4.2.2) describes:
//
//   - create u by t: V_u ← join(V_t, newVC(u)); V_t ← tick(V_t, t); L_u ← ∅
//   - join u by t:   V_t ← join(V_u, V_t), then a new segment for t; every
//     cell with a threadset gets S_d \ {u} and, if that is a single thread,
//     is reset to an exclusive state (OnJoin)
//   - signal cv by t: TS_cv ← TS_t; new segment for t
//   - wait cv by u:   TS_u ← NewSegment(TS_u, TS_cv)
//   - barrier: TS_b ← NewSegment(all participants); each participant
//     TS_t ← NewSegment(TS_t, TS_b)
//   - lock l / unlock l: only L_t changes; locks create no hb (5.1.1)
//   - sleep: nothing (sleeping is not synchronization)
//
// A new segment is a new Epoch whose vector clock snapshot is stored;
// TS_d ->hb TS_t is the pointwise ≤ of the two snapshots.

type vclock map[ThreadID]uint64

func (v vclock) copy() vclock {
	w := vclock{}
	for k, x := range v {
		w[k] = x
	}
	return w
}

func (v vclock) join(w vclock) {
	for k, x := range w {
		if x > v[k] {
			v[k] = x
		}
	}
}

func (v vclock) leq(w vclock) bool {
	for k, x := range v {
		if x > w[k] {
			return false
		}
	}
	return true
}

type segment struct {
	thread ThreadID
	vc     vclock
}

type fakeThread struct {
	name string
	id   ThreadID
	vc   vclock
	ts   Epoch
	held map[string]bool
}

type fakeEnv struct {
	segs      map[Epoch]segment
	nextEpoch Epoch
	threads   map[string]*fakeThread
	byID      map[ThreadID]*fakeThread
	cvs       map[string]vclock

	locksets   [][]string // by LocksetID; 0 is {}
	locksetIDs map[string]LocksetID
	tsets      [][]ThreadID // by ThreadsetID; 0 is {}
	tsetIDs    map[string]ThreadsetID
}

func newFakeEnv() *fakeEnv {
	e := &fakeEnv{
		segs: map[Epoch]segment{}, nextEpoch: 1,
		threads: map[string]*fakeThread{}, byID: map[ThreadID]*fakeThread{},
		cvs: map[string]vclock{}, locksetIDs: map[string]LocksetID{}, tsetIDs: map[string]ThreadsetID{},
	}
	e.internLocks(nil)
	e.internThreads(nil)
	return e
}

func (e *fakeEnv) internLocks(l []string) LocksetID {
	l = slices.Clone(l)
	sort.Strings(l)
	key := strings.Join(l, ",")
	if id, ok := e.locksetIDs[key]; ok {
		return id
	}
	id := LocksetID(len(e.locksets))
	e.locksets = append(e.locksets, l)
	e.locksetIDs[key] = id
	return id
}

func (e *fakeEnv) internThreads(s []ThreadID) ThreadsetID {
	s = slices.Clone(s)
	slices.Sort(s)
	s = slices.Compact(s)
	key := fmt.Sprint(s)
	if id, ok := e.tsetIDs[key]; ok {
		return id
	}
	id := ThreadsetID(len(e.tsets))
	e.tsets = append(e.tsets, s)
	e.tsetIDs[key] = id
	return id
}

// Env implementation.

func (e *fakeEnv) HappensBefore(prior Epoch, cur Access) bool {
	p, ok1 := e.segs[prior]
	c, ok2 := e.segs[cur.TS]
	if !ok1 || !ok2 {
		panic("fakeEnv: unknown segment")
	}
	return p.vc.leq(c.vc)
}

func (e *fakeEnv) Intersect(a, b LocksetID) LocksetID {
	var out []string
	for _, l := range e.locksets[a] {
		if slices.Contains(e.locksets[b], l) {
			out = append(out, l)
		}
	}
	return e.internLocks(out)
}

func (e *fakeEnv) ThreadOf(p Epoch) ThreadID { return e.segs[p].thread }

func (e *fakeEnv) Pair(a, b ThreadID) ThreadsetID { return e.internThreads([]ThreadID{a, b}) }

func (e *fakeEnv) AddThread(s ThreadsetID, t ThreadID) ThreadsetID {
	return e.internThreads(append(slices.Clone(e.tsets[s]), t))
}

// Thread and segment bookkeeping.

func (e *fakeEnv) thread(name string) *fakeThread {
	t, ok := e.threads[name]
	if !ok {
		panic("fakeEnv: unknown thread " + name)
	}
	return t
}

func (e *fakeEnv) addThread(name string, vc vclock) *fakeThread {
	if _, dup := e.threads[name]; dup {
		panic("fakeEnv: thread created twice: " + name)
	}
	t := &fakeThread{name: name, id: ThreadID(len(e.threads) + 1), held: map[string]bool{}}
	t.vc = vc
	t.vc[t.id] = 1 // newVC(t) joined with the parent's clock
	e.threads[name] = t
	e.byID[t.id] = t
	e.newSegment(t)
	return t
}

// newSegment ends t's current segment: tick and record a new epoch.
func (e *fakeEnv) newSegment(t *fakeThread) {
	t.vc[t.id]++
	t.ts = e.nextEpoch
	e.nextEpoch++
	e.segs[t.ts] = segment{thread: t.id, vc: t.vc.copy()}
}

func (e *fakeEnv) lockset(t *fakeThread) LocksetID {
	var l []string
	for k, on := range t.held {
		if on {
			l = append(l, k)
		}
	}
	return e.internLocks(l)
}

func (e *fakeEnv) lockString(id LocksetID) string {
	return "{" + strings.Join(e.locksets[id], ",") + "}"
}

// The trace DSL.

// step is one operation of a trace. who is "thread" or "thread:label"
// (the label, usually the program line, only names the step). op is one of
// r, w, lock L, unlock L, signal CV, wait CV, create T, join T, sleep,
// barrier T1 T2 .... long and short are the expected cell after the step on
// MSM-long and MSM-short: "" (not checked) or a state abbreviation as in the
// dissertation's tables, optionally followed by the expected C_d, e.g.
// "Sh-R {1}".
type step struct {
	who, op     string
	long, short string
}

var abbrev = map[string]State{
	"New": New, "Excl-R": ExclRead, "Excl-W": ExclWrite, "Excl-RW": ExclReadWrite,
	"Sh-R": SharedRead, "Sh-Mod": SharedModified, "Sh-M1": SharedModified1,
	"Sh-M2": SharedModified2, "Race": Race, "Spin": Spin,
}

// trace is a program replayed on one memory location (GLOB). reports lists
// the labels of the accesses expected to report a race, per machine.
type trace struct {
	name        string
	steps       []step
	longReports []string
	shortReport []string
}

// replay runs tr on machine m and returns the labels of the accesses that
// reported a race. It checks the expected cell after every step.
func replay(t *testing.T, m Machine, tr trace) []string {
	t.Helper()
	env := newFakeEnv()
	// The thread of the first step is the initial thread.
	first, _, _ := strings.Cut(tr.steps[0].who, ":")
	env.addThread(first, vclock{})
	var cell Cell
	var reports []string
	for i, s := range tr.steps {
		who, label, _ := strings.Cut(s.who, ":")
		if label == "" {
			label = fmt.Sprint(i)
		}
		label = who + ":" + label
		f := strings.Fields(s.op)
		var th *fakeThread
		if f[0] != "barrier" {
			th = env.thread(who)
		}
		switch f[0] {
		case "r", "w":
			a := Access{Write: f[0] == "w", Thread: th.id, TS: th.ts, Locks: env.lockset(th)}
			before := cell.State
			next, race := Step(m, cell, a, env)
			if race != (next.State == Race && before != Race) {
				t.Errorf("step %d %s %s: race=%v moving %v -> %v", i, label, s.op, race, before, next.State)
			}
			if race {
				reports = append(reports, label)
			}
			cell = next
		case "lock":
			th.held[f[1]] = true
		case "unlock":
			delete(th.held, f[1])
		case "sleep":
		case "create":
			env.addThread(f[1], th.vc.copy())
			env.newSegment(th)
		case "join":
			u := env.thread(f[1])
			th.vc.join(u.vc)
			env.newSegment(th)
			if HasThreadset(cell.State) {
				var rest []ThreadID
				for _, x := range env.tsets[cell.Threads] {
					if x != u.id {
						rest = append(rest, x)
					}
				}
				var survivor Epoch
				if len(rest) == 1 {
					survivor = env.byID[rest[0]].ts
				}
				cell = OnJoin(cell, env.internThreads(rest), len(rest) == 1, survivor)
			}
		case "signal":
			env.cvs[f[1]] = th.vc.copy()
			env.newSegment(th)
		case "wait":
			cv, ok := env.cvs[f[1]]
			if !ok {
				t.Fatalf("step %d: wait on %s before any signal", i, f[1])
			}
			th.vc.join(cv)
			env.newSegment(th)
		case "barrier":
			b := vclock{}
			for _, n := range f[1:] {
				b.join(env.thread(n).vc)
			}
			for _, n := range f[1:] {
				p := env.thread(n)
				p.vc.join(b)
				env.newSegment(p)
			}
		default:
			t.Fatalf("step %d: unknown op %q", i, s.op)
		}

		want := s.short
		if m == Long {
			want = s.long
		}
		got := cell.State.String()
		if HasThreadset(cell.State) || cell.State == SharedRead {
			got += " " + env.lockString(cell.Locks)
		}
		t.Logf("%-14s %-14s -> %s", label, s.op, got)
		if want == "" {
			continue
		}
		ws, wl, hasL := strings.Cut(want, " ")
		st, ok := abbrev[ws]
		if !ok {
			t.Fatalf("step %d: unknown state %q", i, ws)
		}
		if cell.State != st {
			t.Errorf("step %d %s %s: state %v, want %v", i, label, s.op, cell.State, st)
		}
		if hasL && env.lockString(cell.Locks) != wl {
			t.Errorf("step %d %s %s: C_d %s, want %s", i, label, s.op, env.lockString(cell.Locks), wl)
		}
	}
	return reports
}

func runTraces(t *testing.T, traces []trace) {
	t.Helper()
	for _, tr := range traces {
		for _, m := range []Machine{Long, Short} {
			want := tr.shortReport
			if m == Long {
				want = tr.longReports
			}
			t.Run(tr.name+"/"+m.String(), func(t *testing.T) {
				got := replay(t, m, tr)
				if !slices.Equal(got, want) {
					t.Errorf("races reported at %q, want %q", got, want)
				}
			})
		}
	}
}

// Figure 5.2 / table 5.1, and figure 5.5 / table 5.3 share this prefix.
func sigWaitPrefix(readLocked bool, lineRead, lineLock, lineSignal, lineUnlock string) []step {
	s := []step{{"worker:" + lineRead, "r", "Sh-R {}", "Sh-R {}"}}
	if readLocked {
		s = []step{
			{"worker:" + lineRead, "lock 1", "", ""},
			{"worker:" + lineRead, "r", "Sh-R {1}", "Sh-R {1}"},
			{"worker:" + lineRead, "unlock 1", "", ""},
		}
	}
	return append(s,
		step{"worker:" + lineLock, "lock 1", "", ""},
		step{"worker:" + lineSignal, "signal cv", "", ""},
		step{"worker:" + lineUnlock, "unlock 1", "", ""},
		step{"worker:sleep", "sleep", "", ""},
		step{"main:11", "lock 1", "", ""},
		step{"main:13", "wait cv", "", ""},
		step{"main:15", "unlock 1", "", ""},
	)
}

func concat(parts ...[]step) []step { return slices.Concat(parts...) }

// TestDissertationTables replays figures 5.2, 5.3 and 5.5 (tables 5.1, 5.2
// and 5.3) on both machines.
func TestDissertationTables(t *testing.T) {
	fig52head := []step{
		{"main:6", "create worker", "", ""},
		{"main:8", "w", "Excl-W", "Excl-W"},
		{"main:9", "r", "Excl-R", "Excl-R"},
		{"worker:27", "sleep", "", ""},
	}
	runTraces(t, []trace{
		{
			// Table 5.1 with the pseudo-code's lockset rule (choice 9): the
			// race is reported at the worker's write, line 37, after two
			// unsynchronized accesses, as the table says. MSM-short reports
			// at the same access.
			name: "fig5.2-table5.1",
			steps: concat(fig52head, sigWaitPrefix(false, "29", "31", "33", "34"), []step{
				{"main:17", "lock 1", "", ""},
				{"main:18", "r", "Sh-R {}", "Sh-R {}"},
				{"main:18", "w", "Excl-RW", "Sh-Mod {}"},
				{"main:19", "unlock 1", "", ""},
				{"main:21", "r", "Sh-R {}", "Excl-R"},
				{"main:21", "w", "Excl-RW", "Excl-W"},
				{"worker:37", "w", "Race", "Race"},
				{"worker:38", "r", "Race", "Race"},
				{"main:23", "join worker", "Race", "Race"},
			}),
			longReports: []string{"worker:37"},
			shortReport: []string{"worker:37"},
		},
		{
			// The same program with the worker's read at line 29 under lock
			// 1, and main's accesses at lines 8 and 9 too (with choice 13
			// the worker's read meets main's lockset there): C_d is then
			// {1} as printed, and every state of table 5.1 is reproduced
			// row by row.
			name: "fig5.2-table5.1-as-printed",
			steps: concat([]step{
				{"main:6", "create worker", "", ""},
				{"main:7", "lock 1", "", ""},
				{"main:8", "w", "Excl-W", "Excl-W"},
				{"main:9", "r", "Excl-R", "Excl-R"},
				{"main:10", "unlock 1", "", ""},
				{"worker:27", "sleep", "", ""},
			}, sigWaitPrefix(true, "29", "31", "33", "34"), []step{
				{"main:17", "lock 1", "", ""},
				{"main:18", "r", "Sh-R {1}", "Sh-R {1}"},
				{"main:18", "w", "Sh-M1 {1}", "Sh-Mod {1}"},
				{"main:19", "unlock 1", "", ""},
				{"main:21", "r", "Excl-RW", "Excl-R"},
				{"main:21", "w", "Excl-RW", "Excl-W"},
				{"worker:37", "w", "Race", "Race"},
				{"worker:38", "r", "Race", "Race"},
			}),
			longReports: []string{"worker:37"},
			shortReport: []string{"worker:37"},
		},
		{
			// Table 5.2: MSM-long avoids the report on figure 5.3 (main's
			// unlocked read at line 13 after the worker's locked increment);
			// MSM-short reports it at once, which section 5.2.7 names as the
			// reason for Shared-Modified1 ("a transition to Race on an empty
			// lockset would lead to numerous false positives (as shown in the
			// example provided in Figure 5.3)"). After the join MSM-long's
			// location is main's alone again.
			name: "fig5.3-table5.2",
			steps: []step{
				{"main:5", "create worker", "", ""},
				{"main:7", "lock 1", "", ""},
				{"main:8", "w", "Excl-W", "Excl-W"},
				{"main:9", "unlock 1", "", ""},
				{"main:11", "sleep", "", ""},
				{"worker:19", "sleep", "", ""},
				{"worker:21", "lock 1", "", ""},
				{"worker:22", "r", "Sh-M1 {1}", "Sh-Mod {1}"},
				{"worker:22", "w", "Sh-M1 {1}", "Sh-Mod {1}"},
				{"worker:23", "unlock 1", "", ""},
				{"worker:25", "sleep", "", ""},
				{"main:13", "r", "Excl-RW", "Race"},
				{"worker:27", "r", "Sh-M2 {}", "Race"},
				{"main:15", "join worker", "Excl-W", "Race"},
				{"main:16", "r", "Excl-R", "Race"},
			},
			longReports: nil,
			shortReport: []string{"main:13"},
		},
		{
			// Table 5.3: MSM-short reports after one unsynchronized access
			// (worker's read at line 33); MSM-long does not ("The detected
			// race on GLOB is not detected by MSM-long").
			name: "fig5.5-table5.3",
			steps: concat([]step{
				{"main:6", "create worker", "", ""},
				{"main:8", "w", "Excl-W", "Excl-W"},
				{"main:9", "r", "Excl-R", "Excl-R"},
				{"worker:23", "sleep", "", ""},
			}, sigWaitPrefix(false, "25", "27", "29", "30"), []step{
				{"main:17", "r", "Sh-R {}", "Sh-R {}"},
				{"main:17", "w", "Excl-RW", "Sh-Mod {}"},
				{"worker:33", "r", "Sh-M2 {}", "Race"},
				{"main:19", "join worker", "Excl-W", "Race"},
			}),
			longReports: nil,
			shortReport: []string{"worker:33"},
		},
		{
			// "The race would be reported by MSM-long, if it repeated or
			// further unsynchronized read/write accesses happen": one more
			// unsynchronized access by the worker.
			name: "fig5.5-repeated",
			steps: concat([]step{
				{"main:6", "create worker", "", ""},
				{"main:8", "w", "Excl-W", "Excl-W"},
				{"main:9", "r", "Excl-R", "Excl-R"},
			}, sigWaitPrefix(false, "25", "27", "29", "30"), []step{
				{"main:17", "r", "Sh-R {}", "Sh-R {}"},
				{"main:17", "w", "Excl-RW", "Sh-Mod {}"},
				{"worker:33", "r", "Sh-M2 {}", "Race"},
				{"worker:33+", "w", "Race", "Race"},
			}),
			longReports: []string{"worker:33+"},
			shortReport: []string{"worker:33"},
		},
	})
}

// TestLimitations replays figure 5.6 (section 5.3): a false negative both
// machines have.
func TestLimitations(t *testing.T) {
	runTraces(t, []trace{
		{
			// The parent initialises GLOB without a lock, the worker writes
			// it concurrently holding lock 1. The dissertation's machines
			// miss it in this order (section 5.3); with the owner's lockset
			// (choice 13) the worker's write meets the parent's empty E_d.
			name: "fig5.6",
			steps: []step{
				{"parent:create", "create worker", "", ""},
				{"parent:GLOB=0", "w", "Excl-W", "Excl-W"},
				{"worker:lock", "lock 1", "", ""},
				{"worker:GLOB=1", "w", "Race", "Race"},
				{"worker:unlock", "unlock 1", "", ""},
				{"parent:join", "join worker", "Race", "Race"},
			},
			longReports: []string{"worker:GLOB=1"},
			shortReport: []string{"worker:GLOB=1"},
		},
		{
			// The other schedule is caught by both, as it always was.
			name: "fig5.6-worker-first",
			steps: []step{
				{"parent:create", "create worker", "", ""},
				{"worker:lock", "lock 1", "", ""},
				{"worker:GLOB=1", "w", "Excl-W", "Excl-W"},
				{"worker:unlock", "unlock 1", "", ""},
				{"parent:GLOB=0", "w", "Race", "Race"},
				{"parent:join", "join worker", "Race", "Race"},
			},
			longReports: []string{"parent:GLOB=0"},
			shortReport: []string{"parent:GLOB=0"},
		},
		{
			// A locked initialisation, then the worker's parallel write
			// under the same lock: no race, whichever comes first.
			name: "fig5.6-both-locked",
			steps: []step{
				{"parent:create", "create worker", "", ""},
				{"parent:lock", "lock 1", "", ""},
				{"parent:GLOB=0", "w", "Excl-W", "Excl-W"},
				{"parent:unlock", "unlock 1", "", ""},
				{"worker:lock", "lock 1", "", ""},
				{"worker:GLOB=1", "w", "Sh-M1 {1}", "Sh-Mod {1}"},
				{"worker:unlock", "unlock 1", "", ""},
			},
		},
	})
}

// TestChapter3 replays the chapter 3 examples that apply to a hybrid
// detector.
func TestChapter3(t *testing.T) {
	runTraces(t, []trace{
		{
			// Figure 3.8: Eraser's missed race (main writes, worker reads,
			// no synchronization). Both machines catch it at the worker's
			// read: Exclusive-Write, parallel, L_t = ∅.
			name: "fig3.8",
			steps: []step{
				{"main:create", "create worker", "", ""},
				{"main:GLOB=1", "w", "Excl-W", "Excl-W"},
				{"worker:printf", "r", "Race", "Race"},
				{"main:join", "join worker", "Race", "Race"},
			},
			longReports: []string{"worker:printf"},
			shortReport: []string{"worker:printf"},
		},
		{
			// Figure 3.8, other schedule ("regardless of schedule").
			name: "fig3.8-reader-first",
			steps: []step{
				{"main:create", "create worker", "", ""},
				{"worker:printf", "r", "Excl-R", "Excl-R"},
				{"main:GLOB=1", "w", "Race", "Race"},
			},
			longReports: []string{"main:GLOB=1"},
			shortReport: []string{"main:GLOB=1"},
		},
		{
			// Figure 3.7 / table 3.1: main writes and reads GLOB unlocked,
			// the worker increments it under lock 1. Eraser reports it;
			// the dissertation's machines do not, for the reason section
			// 5.3 gives for figure 5.6 (the second thread holds a lock, so
			// the location becomes Shared-Modified with C_d = {1}). With
			// the owner's lockset (choice 13) the worker's read meets main's
			// empty E_d: Shared-Read {}, and MSM-short reports the write.
			// MSM-long tracks only locksets in Shared-Read and waits.
			name: "fig3.7-table3.1",
			steps: []step{
				{"main:5", "create worker", "", ""},
				{"main:7", "w", "Excl-W", "Excl-W"},
				{"main:8", "r", "Excl-R", "Excl-R"},
				{"worker:14", "lock 1", "", ""},
				{"worker:15", "r", "Sh-R {}", "Sh-R {}"},
				{"worker:15", "w", "Excl-RW", "Race"},
				{"worker:16", "unlock 1", "", ""},
				{"main:10", "join worker", "Excl-W", "Race"},
			},
			shortReport: []string{"worker:15"},
		},
		{
			// A counter every thread increments under lock m: no race.
			name: "locked-counter",
			steps: []step{
				{"main:init", "w", "Excl-W", "Excl-W"},
				{"main", "create A", "", ""},
				{"main", "create B", "", ""},
				{"A", "lock m", "", ""},
				{"A:1", "r", "Excl-R", "Excl-R"},
				{"A:1", "w", "Excl-W", "Excl-W"},
				{"A", "unlock m", "", ""},
				{"B", "lock m", "", ""},
				{"B:1", "r", "Sh-M1 {m}", "Sh-Mod {m}"},
				{"B:1", "w", "Sh-M1 {m}", "Sh-Mod {m}"},
				{"B", "unlock m", "", ""},
				{"A", "lock m", "", ""},
				{"A:2", "r", "Sh-M1 {m}", "Sh-Mod {m}"},
				{"A:2", "w", "Sh-M1 {m}", "Sh-Mod {m}"},
				{"A", "unlock m", "", ""},
				{"B", "lock m", "", ""},
				{"B:2", "r", "Sh-M1 {m}", "Sh-Mod {m}"},
				{"B:2", "w", "Sh-M1 {m}", "Sh-Mod {m}"},
				{"B", "unlock m", "", ""},
				{"main", "join A", "Excl-W", "Excl-W"},
				{"main", "join B", "Excl-W", "Excl-W"},
				{"main:result", "r", "Excl-R", "Excl-R"},
			},
		},
		{
			// The same counter without the lock: race at B's first access.
			name: "unlocked-counter",
			steps: []step{
				{"main", "create A", "", ""},
				{"main", "create B", "", ""},
				{"A:1", "r", "Excl-R", "Excl-R"},
				{"A:1", "w", "Excl-W", "Excl-W"},
				{"B:1", "r", "Race", "Race"},
				{"B:1", "w", "Race", "Race"},
				{"A:2", "r", "Race", "Race"},
				{"A:2", "w", "Race", "Race"},
			},
			longReports: []string{"B:1"},
			shortReport: []string{"B:1"},
		},
		{
			// Initialised by main, handed to the worker by create, handed
			// back by join: no race.
			name: "create-join-handoff",
			steps: []step{
				{"main:init", "w", "Excl-W", "Excl-W"},
				{"main", "create worker", "", ""},
				{"worker:use", "r", "Excl-R", "Excl-R"},
				{"worker:update", "w", "Excl-W", "Excl-W"},
				{"main", "join worker", "Excl-W", "Excl-W"},
				{"main:use", "r", "Excl-R", "Excl-R"},
				{"main:update", "w", "Excl-W", "Excl-W"},
			},
		},
		{
			// Written once, then only read in parallel: no race. After both
			// readers are joined, main owns the location again.
			name: "parallel-reads",
			steps: []step{
				{"main:init", "w", "Excl-W", "Excl-W"},
				{"main", "create A", "", ""},
				{"main", "create B", "", ""},
				{"A", "r", "Excl-R", "Excl-R"},
				{"B", "r", "Sh-R {}", "Sh-R {}"},
				{"A", "r", "Sh-R {}", "Sh-R {}"},
				{"B", "r", "Sh-R {}", "Sh-R {}"},
				{"main", "r", "Sh-R {}", "Sh-R {}"},
				{"main", "join A", "Sh-R {}", "Sh-R {}"},
				{"main", "join B", "Excl-R", "Excl-R"},
				{"main:after", "w", "Excl-W", "Excl-W"},
			},
		},
		{
			// Phases separated by barriers (section 3.4.1: Eraser reports a
			// false race here, happens-before does not).
			name: "barrier-phases",
			steps: []step{
				{"main", "create A", "", ""},
				{"main", "create B", "", ""},
				{"A:phase1", "w", "Excl-W", "Excl-W"},
				{"all", "barrier A B", "", ""},
				{"B:phase2", "r", "Excl-R", "Excl-R"},
				{"B:phase2", "w", "Excl-W", "Excl-W"},
				{"all", "barrier A B", "", ""},
				{"A:phase3", "r", "Excl-R", "Excl-R"},
				{"A:phase3", "w", "Excl-W", "Excl-W"},
			},
		},
		{
			// Without the barrier the phases race.
			name: "barrier-missing",
			steps: []step{
				{"main", "create A", "", ""},
				{"main", "create B", "", ""},
				{"A:phase1", "w", "Excl-W", "Excl-W"},
				{"B:phase2", "r", "Race", "Race"},
			},
			longReports: []string{"B:phase2"},
			shortReport: []string{"B:phase2"},
		},
	})
}

// TestChoiceTraces exercises the ambiguity choices of the package comment
// with whole programs.
func TestChoiceTraces(t *testing.T) {
	runTraces(t, []trace{
		{
			// Choice 1 (MSM-short): A and B read under l in parallel, then C
			// writes under l, parallel to TS_d (A's read). The literal
			// pseudo-code would report; C_d ∩ L_t = {l}, so no race.
			name: "choice1-locked-read-shared-then-locked-write",
			steps: []step{
				{"main", "create A", "", ""},
				{"main", "create B", "", ""},
				{"main", "create C", "", ""},
				{"A", "lock l", "", ""},
				{"A", "r", "Excl-R", "Excl-R"},
				{"A", "unlock l", "", ""},
				{"B", "lock l", "", ""},
				{"B", "r", "Sh-R {l}", "Sh-R {l}"},
				{"B", "unlock l", "", ""},
				{"C", "lock l", "", ""},
				{"C", "w", "Sh-M1 {l}", "Sh-Mod {l}"},
				{"C", "unlock l", "", ""},
			},
		},
		{
			// Choice 1 (MSM-short): the same write under an unrelated lock k
			// is reported (MSM-long defers to Exclusive-ReadWrite).
			name: "choice1-locked-read-shared-then-unrelated-lock-write",
			steps: []step{
				{"main", "create A", "", ""},
				{"main", "create B", "", ""},
				{"main", "create C", "", ""},
				{"A", "lock l", "", ""},
				{"A", "r", "Excl-R", "Excl-R"},
				{"A", "unlock l", "", ""},
				{"B", "lock l", "", ""},
				{"B", "r", "Sh-R {l}", "Sh-R {l}"},
				{"B", "unlock l", "", ""},
				{"C", "lock k", "", ""},
				{"C:w", "w", "Excl-RW", "Race"},
				{"C", "unlock k", "", ""},
			},
			shortReport: []string{"C:w"},
		},
		{
			// Choice 2 (MSM-short): Shared-Read -> Shared-Modified stores
			// the writer's segment. B is ordered after A's read (signal
			// before the write) but not after A's write: reported. With
			// TS_d left at A's read it would have been missed. MSM-long
			// defers (Exclusive-ReadWrite -> Shared-Modified2).
			name: "choice2-write-segment-kept",
			steps: []step{
				{"main", "create A", "", ""},
				{"main", "create B", "", ""},
				{"A:read", "r", "Excl-R", "Excl-R"},
				{"B:read", "r", "Sh-R {}", "Sh-R {}"},
				{"A", "signal cv", "", ""},
				{"A:write", "w", "Excl-RW", "Sh-Mod {}"},
				{"B", "wait cv", "", ""},
				{"B:read2", "r", "Sh-M2 {}", "Race"},
			},
			shortReport: []string{"B:read2"},
		},
		{
			// Choice 4: an ordered read moves TS_d of Exclusive-Read to the
			// reader, so B's write, ordered after main's accesses but
			// parallel to A's read, is reported.
			name: "choice4-exclusive-read-ownership",
			steps: []step{
				{"main:w", "w", "Excl-W", "Excl-W"},
				{"main:r", "r", "Excl-R", "Excl-R"},
				{"main", "create A", "", ""},
				{"main", "create B", "", ""},
				{"A:r", "r", "Excl-R", "Excl-R"},
				{"B:w", "w", "Race", "Race"},
			},
			longReports: []string{"B:w"},
			shortReport: []string{"B:w"},
		},
		{
			// Choices 5 and 6 (MSM-long): Exclusive-ReadWrite is owned by
			// the access that entered it, an ordered read returns to
			// Shared-Read, an ordered write stays; the join makes the
			// location main's again. main's unlocked write parallel to A's
			// read is a single unsynchronized pair: MSM-short reports it,
			// MSM-long defers.
			name: "choice5-6-exclusive-readwrite",
			steps: []step{
				{"main", "create A", "", ""},
				{"A", "r", "Excl-R", "Excl-R"},
				{"main:r1", "r", "Sh-R {}", "Sh-R {}"},
				{"main:w1", "w", "Excl-RW", "Race"},
				{"main:w2", "w", "Excl-RW", "Race"},
				{"main:r2", "r", "Sh-R {}", "Race"},
				{"main:w3", "w", "Excl-RW", "Race"},
				{"main", "join A", "Excl-W", "Race"},
			},
			shortReport: []string{"main:w1"},
		},
	})
}
