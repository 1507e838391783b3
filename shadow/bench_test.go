package shadow

import (
	"sync/atomic"
	"testing"
)

// Cell on a hot working set (256 KiB of application memory, 8-byte steps).
func BenchmarkCell(b *testing.B) {
	m := newMem(b)
	const base = 0x7000_0000_0000
	m.Range(base, 256<<10, func(_ uint64, c *[CellWords]uint64) { c[0] = 1 })
	b.ResetTimer()
	var a uint64
	for i := 0; i < b.N; i++ {
		a = (a + 8) & (256<<10 - 1)
		c := m.Cell(base + a)
		c[0]++
	}
}

func BenchmarkCellParallel(b *testing.B) {
	m := newMem(b)
	const base = 0x7000_0000_0000
	m.Range(base, 256<<10, func(_ uint64, c *[CellWords]uint64) { c[0] = 1 })
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		var a uint64
		for pb.Next() {
			a = (a + 8) & (256<<10 - 1)
			c := m.Cell(base + a)
			atomic.AddUint64(&c[2], 1)
		}
	})
}

// Cell scattered over 64 chunks (256 MiB of application space): every
// call is a TLB and cache miss, so this measures the memory system.
func BenchmarkCellScattered(b *testing.B) {
	m := newMem(b)
	const base = 0x7000_0000_0000
	for i := range 64 {
		m.Cell(base + uint64(i)*ChunkSize)
	}
	b.ResetTimer()
	var a uint64
	for i := 0; i < b.N; i++ {
		a = a + 0x10008
		c := m.Cell(base + a%(64*ChunkSize))
		c[0]++
	}
}

func BenchmarkLookup(b *testing.B) {
	m := newMem(b)
	const base = 0x7000_0000_0000
	m.Range(base, 256<<10, func(_ uint64, c *[CellWords]uint64) { c[0] = 1 })
	b.ResetTimer()
	var a, n uint64
	for i := 0; i < b.N; i++ {
		a = (a + 8) & (256<<10 - 1)
		n += m.Lookup(base + a)[0]
	}
}

func BenchmarkLookupMiss(b *testing.B) {
	m := newMem(b)
	for i := 0; i < b.N; i++ {
		if m.Lookup(uint64(i)<<12) != nil {
			b.Fatal()
		}
	}
}

func BenchmarkRange16Unaligned(b *testing.B) {
	m := newMem(b)
	const base = 0x7000_0000_0003
	m.Range(base, 1<<20, func(uint64, *[CellWords]uint64) {})
	b.ResetTimer()
	var n uint64
	for i := 0; i < b.N; i++ {
		m.Range(base+uint64(i&0xffff)*16, 16, func(_ uint64, c *[CellWords]uint64) { n += c[0] })
	}
}

func BenchmarkLockUnlock(b *testing.B) {
	m := newMem(b)
	b.RunParallel(func(pb *testing.PB) {
		var a uint64
		for pb.Next() {
			a += 4
			m.Lock(a)
			m.Unlock(a)
		}
	})
}

func BenchmarkReset1MiB(b *testing.B) {
	m := newMem(b)
	const base = 0x7000_0000_0000
	for i := 0; i < b.N; i++ {
		m.Range(base, 4096, func(_ uint64, c *[CellWords]uint64) { c[0] = 1 })
		m.Reset(base, 1<<20)
	}
}

func benchSets(l *Locksets) []uint32 {
	ids := make([]uint32, 16)
	for i := range ids {
		ids[i] = l.Make(0x1000, uint64(0x2000+i%4*8), uint64(0x3000+i*8))
	}
	return ids
}

func BenchmarkLocksetsIntersect(b *testing.B) {
	l := NewLocksets()
	ids := benchSets(l)
	b.ResetTimer()
	var x uint32
	for i := 0; i < b.N; i++ {
		x += l.Intersect(ids[i&15], ids[(i>>4)&15])
	}
}

func BenchmarkLocksetsIntersectParallel(b *testing.B) {
	l := NewLocksets()
	ids := benchSets(l)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		var x uint32
		i := 0
		for pb.Next() {
			i++
			x += l.Intersect(ids[i&15], ids[(i>>4)&15])
		}
	})
}

// Add of a lock making a set never seen before: the interning slow path.
func BenchmarkLocksetsAddNew(b *testing.B) {
	l := NewLocksets()
	base := l.Make(1, 2)
	for i := 0; i < b.N; i++ {
		l.Add(base, uint64(i)+10)
	}
}

// Intersect of sets never combined before: the interning slow path.
func BenchmarkLocksetsIntersectUncached(b *testing.B) {
	l := NewLocksets()
	for i := 0; i < b.N; i++ {
		x := l.Make(1, 2, uint64(i)+10)
		y := l.Make(1, 3, uint64(i)+10)
		l.Intersect(x, y)
	}
}

// Add of a lock not in the set (lock acquisition), cached.
func BenchmarkLocksetsAdd(b *testing.B) {
	l := NewLocksets()
	ids := benchSets(l)
	b.ResetTimer()
	var x uint32
	for i := 0; i < b.N; i++ {
		x += l.Add(ids[i&15], uint64(0x8000+(i>>4)&7*8))
	}
}

func BenchmarkLocksetsAddParallel(b *testing.B) {
	l := NewLocksets()
	ids := benchSets(l)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		var x uint32
		i := 0
		for pb.Next() {
			i++
			x += l.Add(ids[i&15], uint64(0x8000+(i>>4)&7*8))
		}
	})
}

// Add of a member already there (a thread re-accessing a shared location).
func BenchmarkThreadsetsAddPresent(b *testing.B) {
	s := NewThreadsets()
	id := s.Add(s.Pair(1, 2), 3)
	b.ResetTimer()
	var x uint32
	for i := 0; i < b.N; i++ {
		x += s.Add(id, uint16(1+i%3))
	}
}

func BenchmarkThreadsetsAdd(b *testing.B) {
	s := NewThreadsets()
	id := s.Pair(1, 2)
	b.ResetTimer()
	var x uint32
	for i := 0; i < b.N; i++ {
		x += s.Add(id, uint16(3+i&7))
	}
}

func BenchmarkThreadsetsCanon(b *testing.B) {
	s := NewThreadsets()
	id := s.Pair(1, 2)
	b.ResetTimer()
	var x uint32
	for i := 0; i < b.N; i++ {
		x += s.Canon(id)
	}
}

func BenchmarkVCJoin16(b *testing.B) {
	v, w := &VC{}, &VC{}
	for i := range 16 {
		v.Set(uint16(i), uint64(i))
		w.Set(uint16(i), uint64(16-i))
	}
	for i := 0; i < b.N; i++ {
		v.Join(w)
		v.Tick(3)
	}
}
