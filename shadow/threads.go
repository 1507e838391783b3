package shadow

import (
	"errors"
	"sync"
	"sync/atomic"
)

// MaxThreads is the largest number of thread ids (1..MaxThreads) in use at
// once. Id 0 is never handed out.
const MaxThreads = 1<<16 - 1

// ErrTooManyThreads is returned by Threads.Create when every thread id is in
// use or cannot be reused safely.
var ErrTooManyThreads = errors.New("shadow: too many threads (all 65535 thread ids in use or not safely reusable)")

// Thread is the detector's record of one program thread.
type Thread struct {
	TID          uint16 // small id, 1..MaxThreads; may be reused after the thread has gone
	Serial       uint64 // 1, 2, 3, ... in creation order, never reused (for reports)
	Parent       uint16 // tid of the creating thread, 0 if none
	ParentSerial uint64 // serial of the creating thread, 0 if none
	CreatePC     uint64 // where the thread was created (for reports)
	// StartClock is the first clock value of this thread: epochs (TID, c)
	// with c >= StartClock are this thread's, smaller ones belong to earlier
	// threads that had the same id.
	StartClock uint64

	// VC is the thread's vector clock. Only the thread itself changes it
	// (directly, or through Threads.Create/Join called on its behalf);
	// others read it only after the thread has exited (Threads.Join).
	// Released threads have an empty VC.
	VC VC

	lockset atomic.Uint32

	// under Threads.mu
	exited, detached, released bool
}

// Lockset returns the id (in the runtime's Locksets) of the locks the thread
// holds now.
func (t *Thread) Lockset() uint32 { return t.lockset.Load() }

// SetLockset records the locks the thread holds now.
func (t *Thread) SetLockset(id uint32) { t.lockset.Store(id) }

// Epoch returns the thread's current segment TS_t. Only the thread itself
// may call it.
func (t *Thread) Epoch() Epoch { return t.VC.Epoch(t.TID) }

// NewSegment ends the thread's current segment and starts one that happens
// after it and after every segment in others (ch. 5.1 NewSegment(TS_t,
// others...)): join with each, then tick. Only the thread itself may call it.
func (t *Thread) NewSegment(others ...*VC) {
	for _, o := range others {
		t.VC.Join(o)
	}
	t.VC.Tick(t.TID)
}

// Threads hands out thread ids and keeps the Thread records.
//
// Thread id reuse rule: the id of a thread u that has gone (joined, or
// detached and exited) is given to a new thread v created by thread p only
// if the whole of u happens before the creation, i.e. p's vector clock has
// reached u's final clock: p.VC(u) >= final(u). That holds when p joined u,
// or synchronised after u's end with a thread that did. v then starts its
// own clock at final(u)+1, so epochs of u and v never collide, every epoch
// of u is (correctly) seen as happening before v, and other threads' view of
// u (their component u <= final(u)) still says nothing about v. Treating an
// access of u as "the same thread" when v meets it is then exactly the
// ownership transfer the memory state machine would do anyway. Before the
// id is free, Threadsets.Kill retires every threadset that contains it, so
// no threadset built for u is ever read as containing v. Ids of detached
// threads nobody synchronised with, and ids freed when the creator has no
// record (parent nil), are not reused for such creators: fresh ids are taken
// instead, and Create fails with ErrTooManyThreads once all 65535 are
// taken. Among eligible freed ids the smallest is chosen, which keeps vector
// clocks short.
type Threads struct {
	ts *Threadsets

	cur [1 << 16]atomic.Pointer[Thread] // tid -> current (unreleased) occupant

	mu      sync.Mutex
	final   [1 << 16]uint64 // final clock of the last released occupant
	free    []uint16        // released ids
	next    uint32          // next fresh id
	limit   uint32          // largest id handed out
	serial  uint64
	live    int
	maxLive int
	history map[uint16][]*Thread // released occupants, newest last, for ByEpoch
}

// historyDepth is how many released occupants per id ByEpoch can find.
const historyDepth = 16

// NewThreads returns an empty registry. Released ids are killed in ts.
func NewThreads(ts *Threadsets) *Threads { return newThreads(ts, MaxThreads) }

func newThreads(ts *Threadsets, limit uint32) *Threads {
	return &Threads{ts: ts, next: 1, limit: limit, history: make(map[uint16][]*Thread)}
}

// Create registers a new thread created by parent at pc (ch. 5.1 fork: the
// new thread starts with an empty lockset in a segment that happens after
// the parent's current one, TS_u <- NewSegment(TS_u, TS_t); the parent then
// moves to a new segment, TS_t <- NewSegment(TS_t)). parent may be nil for
// the first thread or a thread whose creator is unknown; otherwise Create
// must be called by the parent's own thread, before the real thread starts.
func (r *Threads) Create(parent *Thread, pc uint64) (*Thread, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	tid, ok := r.pickLocked(parent)
	if !ok {
		return nil, ErrTooManyThreads
	}
	r.serial++
	t := &Thread{TID: tid, Serial: r.serial, CreatePC: pc}
	if parent != nil {
		t.Parent = parent.TID
		t.ParentSerial = parent.Serial
		t.VC.CopyFrom(&parent.VC)
	}
	start := max(t.VC.Get(tid), r.final[tid]) + 1
	t.VC.Set(tid, start)
	t.StartClock = start
	if parent != nil {
		parent.VC.Tick(parent.TID)
	}
	r.live++
	r.maxLive = max(r.maxLive, r.live)
	r.cur[tid].Store(t)
	return t, nil
}

func (r *Threads) pickLocked(parent *Thread) (uint16, bool) {
	best := -1
	if parent != nil {
		for i, id := range r.free {
			if parent.VC.Get(id) >= r.final[id] && (best < 0 || id < r.free[best]) {
				best = i
			}
		}
	}
	if best >= 0 {
		id := r.free[best]
		r.free[best] = r.free[len(r.free)-1]
		r.free = r.free[:len(r.free)-1]
		return id, true
	}
	if r.next <= r.limit {
		id := uint16(r.next)
		r.next++
		return id, true
	}
	return 0, false
}

// Get returns the current occupant of tid, or nil if the id is free.
func (r *Threads) Get(tid uint16) *Thread { return r.cur[tid].Load() }

// ByEpoch returns the thread an epoch belongs to: the current occupant of
// its id or one of the last historyDepth released ones. nil if unknown.
func (r *Threads) ByEpoch(e Epoch) *Thread {
	c := e.Clock()
	if t := r.cur[e.TID()].Load(); t != nil && c >= t.StartClock {
		return t
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	h := r.history[e.TID()]
	for i := len(h) - 1; i >= 0; i-- {
		if c >= h[i].StartClock {
			return h[i]
		}
	}
	return nil
}

// Exit records that t has finished (called by t itself, as the last thing
// it does). A detached thread is released now; a joinable one when joined.
func (r *Threads) Exit(t *Thread) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t.exited = true
	if t.detached {
		r.releaseLocked(t)
	}
}

// Detach records pthread_detach(t) (or a thread created detached). If t has
// already exited it is released now.
func (r *Threads) Detach(t *Thread) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t.detached = true
	if t.exited {
		r.releaseLocked(t)
	}
}

// Join records that joiner has joined t (after pthread_join returned):
// joiner's new segment happens after all of t (ch. 3.4.2.2 join, then
// NewSegment), and t is released: its id is killed in the threadsets (the
// lazy form of "S_d <- S_d \ {t} for every d") and becomes reusable. Called
// by joiner's own thread; every buffered access of t must have been
// processed before.
func (r *Threads) Join(joiner, t *Thread) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t.released {
		// joined twice, or detached and exited: its final clock is all
		// that is left.
		joiner.VC.Set(t.TID, max(joiner.VC.Get(t.TID), r.final[t.TID]))
	} else {
		joiner.VC.Join(&t.VC)
		t.exited = true
		r.releaseLocked(t)
	}
	joiner.VC.Tick(joiner.TID)
}

// Discard undoes Create when the real thread could not be created: t never
// ran, so its id is free again exactly as it was before.
func (r *Threads) Discard(t *Thread) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t.released {
		return
	}
	t.released = true
	r.final[t.TID] = t.StartClock - 1
	r.ts.Kill(t.TID)
	r.cur[t.TID].CompareAndSwap(t, nil)
	r.free = append(r.free, t.TID)
	r.live--
}

func (r *Threads) releaseLocked(t *Thread) {
	if t.released {
		return
	}
	t.released = true
	r.final[t.TID] = t.VC.Get(t.TID)
	r.ts.Kill(t.TID)
	r.cur[t.TID].CompareAndSwap(t, nil)
	h := append(r.history[t.TID], t)
	if len(h) > historyDepth {
		h = h[1:]
	}
	r.history[t.TID] = h
	r.free = append(r.free, t.TID)
	r.live--
	t.VC = VC{}
}

// ThreadStats describes the registry.
type ThreadStats struct {
	Created  uint64 // threads ever created
	Live     int    // threads not yet released
	MaxLive  int    // largest Live seen
	IDsTaken int    // distinct ids handed out (vector clocks have at most IDsTaken+1 components)
	FreeIDs  int    // released ids waiting for reuse
}

// Stats returns counts about the registry.
func (r *Threads) Stats() ThreadStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return ThreadStats{Created: r.serial, Live: r.live, MaxLive: r.maxLive, IDsTaken: int(r.next - 1), FreeIDs: len(r.free)}
}
