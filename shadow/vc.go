package shadow

import "fmt"

// Epoch names one thread segment: the thread id in the high 16 bits and the
// thread's own clock value in the low 48 bits. The zero Epoch (thread 0,
// clock 0) never names a real segment, because clocks start at 1; it happens
// before everything, which makes it a convenient "no previous access".
type Epoch uint64

const (
	// ClockBits is the width of the clock part of an Epoch.
	ClockBits = 48
	// MaxClock is the largest clock value an Epoch can hold.
	MaxClock = 1<<ClockBits - 1
)

// MakeEpoch packs a thread id and a clock value. Clock bits above ClockBits
// are dropped.
func MakeEpoch(tid uint16, clock uint64) Epoch {
	return Epoch(uint64(tid)<<ClockBits | clock&MaxClock)
}

// TID is the thread the segment belongs to (threadof(TS) in the dissertation).
func (e Epoch) TID() uint16 { return uint16(e >> ClockBits) }

// Clock is the thread's clock value at the segment.
func (e Epoch) Clock() uint64 { return uint64(e) & MaxClock }

func (e Epoch) String() string { return fmt.Sprintf("%d@%d", e.TID(), e.Clock()) }

// VC is a vector clock (dissertation ch. 3.4.2.2): component u is the latest
// clock value of thread u known to the owner. Missing components are 0.
//
// Thread segments are represented by epochs: the current segment TS_t of
// thread t is the epoch (t, V_t(t)), and a segment e happens before the
// current segment of the owner of V iff e.Clock() <= V(e.TID())
// (HappensBefore). NewSegment(TS_1, ..., TS_n) of ch. 5.1 for thread t is
//
//	for each i: V_t.Join(V_i)   // join(V, W): pointwise max
//	V_t.Tick(t)                 // tick(V, t): V(t)+1
//
// so every TS_i happens before the new segment, and the new segment has an
// epoch no earlier segment had. newVC(t) is a zero VC followed by Tick(t), or
// NewVC(t). A synchronisation object (lock, condition variable, barrier)
// keeps a VC of its own standing for TS_cv or TS_b: "TS_cv <- TS_t" is
// cv.CopyFrom(&V_t), "TS_b <- NewSegment(TS_b, TS_t)" is b.Join(&V_t).
//
// A VC is not safe for concurrent mutation: each thread's VC is changed only
// by that thread (or by the registry on its behalf), and the VC of a
// synchronisation object only under the lock that serialises that object.
type VC struct {
	c []uint64
}

// NewVC returns newVC(t): 1 for t, 0 elsewhere.
func NewVC(t uint16) *VC {
	v := &VC{}
	v.Set(t, 1)
	return v
}

// VCOf is the clock whose components are c (component i for thread
// id i), which it keeps.
func VCOf(c []uint64) *VC { return &VC{c: c} }

// Components are v's components (component i for thread id i, Len of
// them), not to be changed.
func (v *VC) Components() []uint64 { return v.c }

// Len is the number of components stored (1 + the largest thread id with a
// component, or less; components beyond Len are 0).
func (v *VC) Len() int { return len(v.c) }

// Get returns component tid.
func (v *VC) Get(tid uint16) uint64 {
	if int(tid) < len(v.c) {
		return v.c[tid]
	}
	return 0
}

// Set sets component tid, growing the vector as needed.
func (v *VC) Set(tid uint16, clock uint64) {
	if int(tid) >= len(v.c) {
		if clock == 0 {
			return
		}
		v.grow(int(tid) + 1)
	}
	v.c[tid] = clock
}

func (v *VC) grow(n int) {
	if n <= cap(v.c) {
		v.c = v.c[:n]
		return
	}
	c := make([]uint64, n, max(n, 2*cap(v.c), 8))
	copy(c, v.c)
	v.c = c
}

// Tick increments component tid (the owner's own component) and returns the
// new value. The clock saturates at MaxClock (2.8e14 synchronisation events
// of one thread id) instead of wrapping: from then on the thread's segments
// are no longer told apart, which can only hide races, never invent them.
func (v *VC) Tick(tid uint16) uint64 {
	if int(tid) >= len(v.c) {
		v.grow(int(tid) + 1)
	}
	c := v.c[tid]
	if c < MaxClock {
		c++
	}
	v.c[tid] = c
	return c
}

// Join sets v to the pointwise maximum of v and w.
func (v *VC) Join(w *VC) {
	if len(w.c) > len(v.c) {
		v.grow(len(w.c))
	}
	vc := v.c[:len(w.c)]
	for i, x := range w.c {
		if x > vc[i] {
			vc[i] = x
		}
	}
}

// Copy returns an independent copy of v. A clock of up to three threads
// is copied in one allocation, header and components together: a
// lock-heavy program copies its threads' clocks at every join, as
// snapshots the segments it publishes share (runtime/detect,
// thread.snapshot). For three threads that is the same 48 bytes as the
// two allocations apart; for more, two allocations take fewer bytes than
// a bigger box would.
func (v *VC) Copy() *VC {
	n := len(v.c)
	if n == 0 {
		return &VC{}
	}
	if n <= 3 {
		b := new(struct {
			vc VC
			c  [3]uint64
		})
		b.vc.c = b.c[:n]
		copy(b.vc.c, v.c)
		return &b.vc
	}
	c := make([]uint64, n)
	copy(c, v.c)
	return &VC{c: c}
}

// CopyFrom makes v equal to w, reusing v's storage.
func (v *VC) CopyFrom(w *VC) {
	if cap(v.c) < len(w.c) {
		v.c = make([]uint64, len(w.c), max(len(w.c), 8))
	}
	v.c = v.c[:len(w.c)]
	copy(v.c, w.c)
}

// Reset sets every component to 0, keeping the storage.
func (v *VC) Reset() {
	clear(v.c)
	v.c = v.c[:0]
}

// Epoch returns the epoch (tid, V(tid)): for the owner t of v, its current
// thread segment TS_t.
func (v *VC) Epoch(tid uint16) Epoch { return MakeEpoch(tid, v.Get(tid)) }

// HappensBefore reports whether the segment e happens before (or is) the
// current segment of v's owner: e.Clock() <= V(e.TID()).
func (v *VC) HappensBefore(e Epoch) bool {
	t := int(e.TID())
	c := e.Clock()
	if t < len(v.c) {
		return c <= v.c[t]
	}
	return c == 0
}

// LessEq reports V <= W pointwise: the segment of v happens before the
// segment of w (V -hb-> W in ch. 3.4.2.2).
func (v *VC) LessEq(w *VC) bool {
	for i, x := range v.c {
		if x == 0 {
			continue
		}
		if i >= len(w.c) || x > w.c[i] {
			return false
		}
	}
	return true
}

func (v *VC) String() string {
	s := "["
	first := true
	for i, x := range v.c {
		if x == 0 {
			continue
		}
		if !first {
			s += " "
		}
		first = false
		s += fmt.Sprintf("%d:%d", i, x)
	}
	return s + "]"
}
