package shadow

import (
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

func TestLocksetsBasic(t *testing.T) {
	l := NewLocksets()
	if l.Len(0) != 0 || len(l.Members(0)) != 0 {
		t.Fatal("id 0 must be empty")
	}
	a := l.Add(0, 0x1000)
	ab := l.Add(a, 0x2000)
	ba := l.Add(l.Add(0, 0x2000), 0x1000)
	if ab != ba || ab == a || a == 0 {
		t.Fatalf("ids a=%d ab=%d ba=%d", a, ab, ba)
	}
	if l.Add(ab, 0x1000) != ab {
		t.Error("adding a member must return the same id")
	}
	if !slices.Equal(l.Members(ab), []uint64{0x1000, 0x2000}) || l.Len(ab) != 2 {
		t.Errorf("Members = %x", l.Members(ab))
	}
	if l.Remove(ab, 0x2000) != a || l.Remove(a, 0x1000) != 0 || l.Remove(a, 0x3000) != a {
		t.Error("Remove")
	}
	c := l.Make(0x3000, 0x2000)
	if got := l.Intersect(ab, c); got != l.Make(0x2000) {
		t.Errorf("Intersect = %x", l.Members(got))
	}
	if l.Intersect(ab, c) != l.Intersect(c, ab) || l.Intersect(ab, ab) != ab || l.Intersect(ab, 0) != 0 {
		t.Error("Intersect identities")
	}
	if l.Intersect(ab, a) != a || l.Intersect(a, l.Make(0x3000)) != 0 {
		t.Error("Intersect subset/disjoint")
	}
	if !l.Contains(ab, 0x2000) || l.Contains(a, 0x2000) {
		t.Error("Contains")
	}
	// big sets use the binary search and the heap scratch path
	var big uint32
	for i := range 40 {
		big = l.Add(big, uint64(1000-i*8))
	}
	if l.Len(big) != 40 || !slices.IsSorted(l.Members(big)) || !l.Contains(big, 1000-8*17) {
		t.Error("big set")
	}
	if l.Remove(l.Add(big, 3), 3) != big {
		t.Error("big add/remove")
	}
	if n, _ := l.Count(); n < 5 {
		t.Errorf("Count = %d", n)
	}
}

// model: sets as sorted slices; check the table against it under random ops.
// TestLocksetsMirror: every set of up to MirrorWords-1 locks interned
// after SetMirror is in the mirror (its locks, then their number), in
// order; larger sets and ids past the mirror's end are not.
func TestLocksetsMirror(t *testing.T) {
	l := NewLocksets()
	m := make([]uint64, 6*MirrorWords)
	l.SetMirror(m)
	a := l.Make(0x30)
	ab := l.Add(a, 0x10)
	abc := l.Add(ab, 0x20)
	abcd := l.Add(abc, 0x40)
	b := l.Make(0x10)
	late := l.Make(0x50) // id 6: past the mirror
	for _, c := range []struct {
		id    uint32
		locks []uint64
	}{{a, []uint64{0x30}}, {ab, []uint64{0x10, 0x30}}, {abc, []uint64{0x10, 0x20, 0x30}}, {b, []uint64{0x10}}} {
		at := int(c.id) * MirrorWords
		if got := m[at : at+1+len(c.locks)]; got[0] != uint64(len(c.locks)) || !slices.Equal(got[1:], c.locks) {
			t.Errorf("set %d: mirror %x, want %d then %x", c.id, got, len(c.locks), c.locks)
		}
	}
	if at := int(abcd) * MirrorWords; m[at] != 0 {
		t.Errorf("a set of %d locks was copied: %x", MirrorWords, m[at:at+MirrorWords])
	}
	if int(late)*MirrorWords < len(m) {
		t.Fatalf("id %d should be past the mirror", late)
	}
	if m[0] != 0 {
		t.Errorf("the empty set's entry: %d", m[0])
	}
}

func TestLocksetsRandom(t *testing.T) {
	l := NewLocksets()
	r := rand.New(rand.NewPCG(1, 2))
	ids := []uint32{0}
	byContent := map[string]uint32{"[]": 0}
	check := func(id uint32, want []uint64) {
		t.Helper()
		if !slices.Equal(l.Members(id), want) {
			t.Fatalf("id %d = %x, want %x", id, l.Members(id), want)
		}
		k := fmtSet(want)
		if old, ok := byContent[k]; ok && old != id {
			t.Fatalf("set %s has ids %d and %d", k, old, id)
		}
		byContent[k] = id
		ids = append(ids, id)
	}
	for range 20000 {
		a := ids[r.IntN(len(ids))]
		ma := slices.Clone(l.Members(a))
		x := uint64(r.IntN(24)) * 64
		switch r.IntN(3) {
		case 0:
			want := ma
			if !slices.Contains(ma, x) {
				want = append(ma, x)
				slices.Sort(want)
			}
			check(l.Add(a, x), want)
		case 1:
			want := slices.DeleteFunc(ma, func(y uint64) bool { return y == x })
			check(l.Remove(a, x), want)
		case 2:
			b := ids[r.IntN(len(ids))]
			var want []uint64
			for _, y := range ma {
				if slices.Contains(l.Members(b), y) {
					want = append(want, y)
				}
			}
			check(l.Intersect(a, b), want)
		}
		if len(ids) > 4000 {
			ids = ids[2000:]
		}
	}
}

func fmtSet[T member](m []T) string {
	s := "["
	for i, x := range m {
		if i > 0 {
			s += " "
		}
		s += string(rune('0'+x%10)) + string(rune('a'+x/10%26)) + string(rune('a'+x/260%26))
	}
	return s + "]"
}

// Many goroutines intern the same sets at once: every set must end with
// one id, and every result must have the right members.
func TestLocksetsConcurrent(t *testing.T) {
	l := NewLocksets()
	const G = 8
	var wg sync.WaitGroup
	results := make([]map[uint64]uint32, G) // bitmask of locks -> id
	for g := range G {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 7))
			seen := map[uint64]uint32{}
			cur := []uint32{0}
			for range 5000 {
				a := cur[r.IntN(len(cur))]
				var id uint32
				switch r.IntN(3) {
				case 0:
					id = l.Add(a, uint64(r.IntN(12)+1)*8)
				case 1:
					id = l.Remove(a, uint64(r.IntN(12)+1)*8)
				case 2:
					id = l.Intersect(a, cur[r.IntN(len(cur))])
				}
				var mask uint64
				for _, x := range l.Members(id) {
					mask |= 1 << (x / 8)
				}
				if old, ok := seen[mask]; ok && old != id {
					t.Errorf("mask %x: ids %d and %d", mask, old, id)
					return
				}
				seen[mask] = id
				cur = append(cur, id)
				if len(cur) > 64 {
					cur = cur[32:]
				}
			}
			results[g] = seen
		}()
	}
	wg.Wait()
	all := map[uint64]uint32{}
	for _, m := range results {
		for k, v := range m {
			if old, ok := all[k]; ok && old != v {
				t.Fatalf("mask %x: ids %d and %d in different goroutines", k, old, v)
			}
			all[k] = v
		}
	}
	// a second pass must hit the caches and give the same ids
	for mask, id := range all {
		var got uint32
		for i := range 13 {
			if mask&(1<<i) != 0 {
				got = l.Add(got, uint64(i)*8)
			}
		}
		if got != id {
			t.Fatalf("mask %x: %d then %d", mask, id, got)
		}
	}
}

func TestThreadsetsBasic(t *testing.T) {
	s := NewThreadsets()
	a := s.Single(1)
	if a == 0 || s.Single(1) != a || s.Len(a) != 1 || s.Members(a)[0] != 1 {
		t.Fatal("Single")
	}
	p := s.Pair(2, 1)
	if p != s.Pair(1, 2) || p != s.Add(a, 2) || !slices.Equal(s.Members(p), []uint16{1, 2}) {
		t.Fatal("Pair")
	}
	if s.Pair(3, 3) != s.Single(3) {
		t.Error("Pair(a,a)")
	}
	if s.Remove(p, 2) != a || s.Remove(a, 1) != 0 || !s.Contains(p, 2) || s.Contains(a, 2) {
		t.Error("Remove/Contains")
	}
	if s.Canon(p) != p || s.Retired(p) {
		t.Error("live set must be canonical")
	}
}

func TestThreadsetsKill(t *testing.T) {
	s := NewThreadsets()
	s12 := s.Pair(1, 2)
	s123 := s.Add(s12, 3)
	s23 := s.Pair(2, 3)
	s2 := s.Single(2)
	s3 := s.Single(3)

	s.Kill(2) // join(2)
	for _, c := range []struct {
		id   uint32
		want []uint16
	}{{s12, []uint16{1}}, {s123, []uint16{1, 3}}, {s23, []uint16{3}}, {s2, nil}, {s3, []uint16{3}}} {
		got := s.Canon(c.id)
		if !slices.Equal(s.Members(got), c.want) {
			t.Errorf("Canon(%v) = %v, want %v", s.Members(c.id), s.Members(got), c.want)
		}
	}
	if !s.Retired(s12) || s.Retired(s3) {
		t.Error("Retired")
	}
	// retired sets keep their members for reports
	if !slices.Equal(s.Members(s12), []uint16{1, 2}) {
		t.Error("retired set lost its members")
	}
	// operations on retired ids work on the canonical set
	if got := s.Add(s12, 4); !slices.Equal(s.Members(got), []uint16{1, 4}) || s.Retired(got) {
		t.Errorf("Add on retired = %v", s.Members(got))
	}
	if got := s.Remove(s123, 3); got != s.Single(1) {
		t.Errorf("Remove on retired = %v", s.Members(got))
	}
	// id 2 reused by a new thread: new ids, never the retired ones
	n12 := s.Pair(1, 2)
	if n12 == s12 || s.Retired(n12) || s.Single(2) == s2 {
		t.Error("sets of a reused thread id must be new ids")
	}
	// chained kills
	s.Kill(3)
	if got := s.Canon(s123); got != s.Single(1) {
		t.Errorf("Canon after two kills = %v", s.Members(got))
	}
	if got := s.Canon(s23); got != 0 {
		t.Errorf("Canon({2,3}) after killing both = %v", s.Members(got))
	}
	if s.Canon(n12) != n12 {
		t.Error("new thread 2's set must survive killing 3")
	}
}

// Workers combine threadsets while threads are killed. Afterwards no
// canonical set may contain a killed thread, and Canon must equal the
// members minus the killed threads.
func TestThreadsetsConcurrentKill(t *testing.T) {
	s := NewThreadsets()
	const G = 6
	dying := []uint16{20, 21, 22, 23, 24, 25, 26, 27}
	pool := []uint32{0}
	for i, d := range dying {
		pool = append(pool, s.Pair(d, uint16(i%4+1)), s.Add(s.Pair(d, 5), dying[(i+1)%len(dying)]))
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var produced []uint32
	for g := range G {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 3))
			local := slices.Clone(pool)
			for range 4000 {
				a := local[r.IntN(len(local))]
				var id uint32
				if r.IntN(2) == 0 {
					id = s.Add(a, uint16(r.IntN(8)+1))
				} else {
					id = s.Remove(a, uint16(r.IntN(8)+1))
				}
				_ = s.Canon(id)
				local = append(local, id)
				if len(local) > 100 {
					local = append(local[:len(pool)], local[len(local)-50:]...)
				}
				if r.IntN(50) == 0 {
					mu.Lock()
					produced = append(produced, id)
					mu.Unlock()
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for _, d := range dying {
			s.Kill(d)
		}
	}()
	wg.Wait()
	isDying := func(x uint16) bool { return x >= 20 && x <= 27 }
	for _, id := range append(produced, pool...) {
		c := s.Canon(id)
		want := slices.DeleteFunc(slices.Clone(s.Members(id)), isDying)
		if !slices.Equal(s.Members(c), want) {
			t.Fatalf("Canon(%v) = %v, want %v", s.Members(id), s.Members(c), want)
		}
	}
}

func TestInvalidID(t *testing.T) {
	l := NewLocksets()
	defer func() {
		if recover() == nil {
			t.Error("no panic for an invalid id")
		}
	}()
	l.Members(12345)
}

// TestOpCacheGrows: the memo starts small, doubles as it fills, stops at
// its bound, and answers only what was put since it last grew.
func TestOpCacheGrows(t *testing.T) {
	var c opCache
	c.init(10)
	if n := len(c.cur.Load().slots); n != 1<<opCacheMinBits {
		t.Fatalf("starts with %d slots, want %d", n, 1<<opCacheMinBits)
	}
	for i := uint32(1); i <= 4096; i++ {
		c.put(i, uint64(i)*3, i+7)
		if r, ok := c.get(i, uint64(i)*3); ok && r != i+7 {
			t.Fatalf("get(%d) = %d, want %d", i, r, i+7)
		}
	}
	if n := len(c.cur.Load().slots); n != 1<<10 {
		t.Fatalf("%d slots after 4096 puts, want the bound %d", n, 1<<10)
	}
	hits := 0
	for i := uint32(1); i <= 4096; i++ {
		r, ok := c.get(i, uint64(i)*3)
		if ok && r != i+7 {
			t.Fatalf("get(%d) = %d, want %d", i, r, i+7)
		}
		if ok {
			hits++
		}
		if _, ok := c.get(i, uint64(i)*3+1); ok {
			t.Fatalf("get(%d, %d) hit a key never put", i, uint64(i)*3+1)
		}
	}
	if hits == 0 || hits > 1<<10 {
		t.Fatalf("%d hits among 4096 keys in %d slots", hits, 1<<10)
	}
}
