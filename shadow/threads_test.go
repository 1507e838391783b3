package shadow

import (
	"errors"
	"sync"
	"testing"
)

func TestThreadsCreate(t *testing.T) {
	ts := NewThreadsets()
	r := NewThreads(ts)
	main, err := r.Create(nil, 0x400000)
	if err != nil || main.TID != 1 || main.Serial != 1 || main.Parent != 0 || main.VC.Get(1) != 1 || main.StartClock != 1 {
		t.Fatalf("main = %+v, %v", main, err)
	}
	before := main.Epoch()
	a, _ := r.Create(main, 0x401000)
	if a.TID != 2 || a.Parent != 1 || a.ParentSerial != 1 || a.CreatePC != 0x401000 || a.Lockset() != 0 {
		t.Fatalf("a = %+v", a)
	}
	if !a.VC.HappensBefore(before) {
		t.Error("parent's past must happen before the child")
	}
	if a.VC.HappensBefore(main.Epoch()) {
		t.Error("parent's new segment must be parallel to the child")
	}
	if r.Get(2) != a || r.Get(3) != nil {
		t.Error("Get")
	}
	a.SetLockset(7)
	if a.Lockset() != 7 {
		t.Error("Lockset")
	}
	st := r.Stats()
	if st.Created != 2 || st.Live != 2 || st.IDsTaken != 2 {
		t.Errorf("Stats = %+v", st)
	}
}

// A joined thread's id is reused, with its clock continued, and the
// threadsets that contained it are retired.
func TestThreadsReuseAfterJoin(t *testing.T) {
	ts := NewThreadsets()
	r := NewThreads(ts)
	main, _ := r.Create(nil, 0)
	a, _ := r.Create(main, 0)
	a.NewSegment()
	aAccess := a.Epoch()
	shared := ts.Pair(main.TID, a.TID)
	r.Exit(a)
	r.Join(main, a)
	if ts.Canon(shared) != ts.Single(main.TID) {
		t.Error("join must retire threadsets containing the joined thread")
	}
	if !main.VC.HappensBefore(aAccess) {
		t.Error("joined thread must happen before the joiner")
	}
	if r.Get(a.TID) != nil {
		t.Error("released id still has an occupant")
	}
	b, err := r.Create(main, 0)
	if err != nil || b.TID != a.TID {
		t.Fatalf("b = %+v, %v: want reuse of %d", b, err, a.TID)
	}
	if b.StartClock != aAccess.Clock()+1 || b.Serial != 3 {
		t.Errorf("b.StartClock = %d, want %d", b.StartClock, aAccess.Clock()+1)
	}
	if !b.VC.HappensBefore(aAccess) {
		t.Error("the old occupant must happen before the new one")
	}
	if main.VC.HappensBefore(b.Epoch()) {
		t.Error("the new occupant is parallel to its parent")
	}
	if r.ByEpoch(aAccess) != a || r.ByEpoch(b.Epoch()) != b || r.ByEpoch(MakeEpoch(9, 1)) != nil {
		t.Error("ByEpoch")
	}
	if st := r.Stats(); st.IDsTaken != 2 || st.Live != 2 || st.MaxLive != 2 {
		t.Errorf("Stats = %+v", st)
	}
}

// A detached thread nobody synchronised with must not lend its id.
func TestThreadsNoReuseWithoutHB(t *testing.T) {
	ts := NewThreadsets()
	r := NewThreads(ts)
	main, _ := r.Create(nil, 0)
	d, _ := r.Create(main, 0)
	r.Detach(d)
	d.NewSegment()
	r.Exit(d) // released now
	if r.Get(d.TID) != nil || r.Stats().FreeIDs != 1 {
		t.Fatal("detached+exited thread must be released")
	}
	e, _ := r.Create(main, 0)
	if e.TID == d.TID {
		t.Fatal("reused the id of a thread that does not happen before")
	}
	// a parentless thread never reuses
	f, _ := r.Create(nil, 0)
	if f.TID == d.TID {
		t.Fatal("parentless thread reused an id")
	}
	// exit-then-detach order releases too
	g, _ := r.Create(main, 0)
	r.Exit(g)
	if r.Get(g.TID) == nil {
		t.Fatal("joinable exited thread released before join/detach")
	}
	r.Detach(g)
	if r.Get(g.TID) != nil {
		t.Fatal("Detach after Exit must release")
	}
}

// Reuse through transitive synchronisation: main joins a, then creates c;
// c's children may take a's id.
func TestThreadsReuseTransitive(t *testing.T) {
	ts := NewThreadsets()
	r := NewThreads(ts)
	main, _ := r.Create(nil, 0)
	a, _ := r.Create(main, 0)
	c, _ := r.Create(main, 0)
	r.Exit(a)
	r.Join(main, a)
	// c was created before the join: it does not know a's end
	x, _ := r.Create(c, 0)
	if x.TID == a.TID {
		t.Fatal("c has not synchronised with a's end")
	}
	// c acquires something main released after the join
	lock := main.VC.Copy()
	main.NewSegment()
	c.NewSegment(lock)
	y, _ := r.Create(c, 0)
	if y.TID != a.TID {
		t.Fatalf("y.TID = %d, want reuse of %d", y.TID, a.TID)
	}
}

func TestThreadsExhaustion(t *testing.T) {
	ts := NewThreadsets()
	r := newThreads(ts, 3)
	main, _ := r.Create(nil, 0)
	a, _ := r.Create(main, 0)
	d, _ := r.Create(main, 0)
	if _, err := r.Create(main, 0); !errors.Is(err, ErrTooManyThreads) {
		t.Fatalf("err = %v", err)
	}
	r.Detach(d)
	r.Exit(d)
	if _, err := r.Create(main, 0); !errors.Is(err, ErrTooManyThreads) {
		t.Fatal("a detached thread's id was reused without happens-before")
	}
	r.Exit(a)
	r.Join(main, a)
	b, err := r.Create(main, 0)
	if err != nil || b.TID != a.TID {
		t.Fatalf("b = %v, %v", b, err)
	}
	r.Discard(b)
	b2, err := r.Create(main, 0)
	if err != nil || b2.TID != a.TID || b2.StartClock != b.StartClock {
		t.Fatalf("after Discard: %+v, %v", b2, err)
	}
}

// Several parent threads create and join children at once.
func TestThreadsConcurrent(t *testing.T) {
	ts := NewThreadsets()
	r := NewThreads(ts)
	root, _ := r.Create(nil, 0)
	const P = 6
	parents := make([]*Thread, P)
	for i := range parents {
		parents[i], _ = r.Create(root, uint64(i))
	}
	var wg sync.WaitGroup
	for _, p := range parents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 300 {
				c, err := r.Create(p, 1)
				if err != nil {
					t.Error(err)
					return
				}
				c.NewSegment()
				e := c.Epoch()
				set := ts.Pair(p.TID, c.TID)
				r.Exit(c)
				r.Join(p, c)
				if !p.VC.HappensBefore(e) {
					t.Error("join lost happens-before")
				}
				if got := ts.Canon(set); got != ts.Single(p.TID) {
					t.Errorf("Canon = %v", ts.Members(got))
				}
			}
		}()
	}
	wg.Wait()
	st := r.Stats()
	if st.Created != 1+P+P*300 || st.Live != 1+P {
		t.Errorf("Stats = %+v", st)
	}
	if st.IDsTaken > 1+2*P {
		t.Errorf("ids not reused: %+v", st)
	}
}

// Short-lived threads next to a long-lived one: the long-lived thread's
// membership list is pruned of retired sets.
func TestThreadsetsPrune(t *testing.T) {
	s := NewThreadsets()
	for i := range 1000 {
		u := uint16(2 + i%50)
		s.Pair(1, u)
		s.Kill(u)
	}
	s.t.mu.Lock()
	n := len(s.t.byMember[1])
	s.t.mu.Unlock()
	if n > 200 {
		t.Errorf("byMember[1] holds %d ids", n)
	}
}

// Sets grow to MaxMembers threads and then stand for many threads, which
// no join brings back to one (and whose Kill costs nothing).
func TestThreadsetsMany(t *testing.T) {
	s := NewThreadsets()
	id := s.Single(1)
	for u := uint16(2); u <= MaxMembers; u++ {
		id = s.Add(id, u)
	}
	if s.Len(id) != MaxMembers || id == Many {
		t.Fatalf("%d members: id %d, len %d", MaxMembers, id, s.Len(id))
	}
	if s.Add(id, 5) != id {
		t.Error("adding a member changed the set")
	}
	many := s.Add(id, MaxMembers+1)
	if many != Many || s.Add(many, 99) != Many || s.Remove(many, 1) != Many || !s.Contains(many, 1234) {
		t.Errorf("Many: add %d", many)
	}
	for u := uint16(1); u <= MaxMembers+1; u++ {
		s.Kill(u)
	}
	if s.Retired(Many) || s.Canon(Many) != Many || s.Members(Many) != nil {
		t.Error("Many was retired")
	}
}
