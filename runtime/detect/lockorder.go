package detect

import (
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"hgrewrite/abi"
)

// Lock-order inversions (potential deadlocks), as ThreadSanitizer's and
// Helgrind's deadlock detectors find them: the lock-order graph has an
// edge A -> B when a thread acquired B while it held A; a cycle in it is
// an order in which the threads, run at other times, can each hold one
// lock of the cycle and wait for the next. Every cycle is reported once.
//
// Which acquisitions make edges is decided by the C side
// (runtime/lockorder.c): it keeps the pairs (held, acquired) it has seen
// and marks the lock event of a new pair (abi.LockOrder). Such an event
// notes the thread's held mutexes here (lockOrderNote); the C side then
// flushes at once and hands over the thread's call stack (Stack), which
// the new edges keep (lockOrderStack). An acquisition that cannot
// deadlock (a successful trylock, a recursive hold) makes no edge into
// its mutex; the mutex still starts edges while it is held.

// lockCycleVisits bounds the nodes a cycle search visits: a graph of
// thousands of mutexes (one per object, nested under a global lock) must
// not cost a search of all of them at every new edge.
const lockCycleVisits = 4096

// lockEdge is an edge of the lock-order graph: thread by acquired to
// while it held from, first with the call stack stack (return addresses,
// innermost first; nil when unknown).
type lockEdge struct {
	from, to uint64
	by       lockThread
	stack    []uint64
}

// lockThread is the thread of an edge as its report names it: its id may
// belong to another thread by the time a cycle is found.
type lockThread struct {
	tid      int32
	earlier  int    // threads that had the id before it (thread.earlier)
	parent   int32  // -1 for the main thread
	createPC uint64 // link-time pc of the pthread_create call, 0 if unknown
	// the creator's stack (thread.createStack, never changed once set)
	createStack []uint64
}

func threadOf(t *thread) lockThread {
	return lockThread{tid: t.tid, earlier: t.earlier, parent: t.parent, createPC: t.createPC, createStack: t.createStack}
}

// lockPair is an acquisition waiting for its stack: to was acquired
// while from was held.
type lockPair struct{ from, to uint64 }

// lockGraph is the process's lock-order graph. Edges are added rarely
// (once per new pair), but every heap release asks whether its block held
// a mutex of the graph: the sorted list of the mutexes with an edge is
// published whole (copied on change), so that the question takes no
// lock that all threads would contend for.
type lockGraph struct {
	mu       sync.Mutex
	out      map[uint64]map[uint64]*lockEdge // from -> to -> edge
	in       map[uint64]map[uint64]bool      // to -> from: the edges into each mutex
	nodes    atomic.Pointer[[]uint64]        // the mutexes with an edge, sorted; never changed once published
	reported map[string]bool                 // the cycles reported, by cycleKey
}

// add records the edge from -> to, first acquired by thread by with
// stack. When the edge is new and closes a cycle not reported before, it
// returns the cycle's edges in order, the new one last, as
// ThreadSanitizer orders them (copies: the caller reports them without
// the graph's lock); else nil.
func (g *lockGraph) add(from, to uint64, by lockThread, stack []uint64) []lockEdge {
	if from == to {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.out[from][to] != nil {
		return nil
	}
	if g.out == nil {
		g.out, g.in, g.reported = map[uint64]map[uint64]*lockEdge{}, map[uint64]map[uint64]bool{}, map[string]bool{}
	}
	e := &lockEdge{from: from, to: to, by: by, stack: stack}
	if g.out[from] == nil {
		g.out[from] = map[uint64]*lockEdge{}
	}
	g.out[from][to] = e
	if g.in[to] == nil {
		g.in[to] = map[uint64]bool{}
	}
	g.in[to][from] = true
	g.addNode(from)
	g.addNode(to)
	path := g.path(to, from)
	if path == nil {
		return nil
	}
	cycle := append(path, *e)
	key := cycleKey(cycle)
	if g.reported[key] {
		return nil
	}
	g.reported[key] = true
	return cycle
}

// path finds the shortest path from -> ... -> to (breadth first, at most
// lockCycleVisits mutexes) and returns copies of its edges, or nil. The
// caller holds g.mu.
func (g *lockGraph) path(from, to uint64) []lockEdge {
	via := map[uint64]*lockEdge{from: nil} // how the search reached each mutex
	queue := []uint64{from}
	for len(queue) > 0 && len(via) <= lockCycleVisits {
		m := queue[0]
		queue = queue[1:]
		for next, e := range g.out[m] {
			if _, ok := via[next]; ok {
				continue
			}
			via[next] = e
			if next == to {
				return pathTo(via, to)
			}
			queue = append(queue, next)
		}
	}
	return nil
}

// pathTo follows the search's edges back from to.
func pathTo(via map[uint64]*lockEdge, to uint64) []lockEdge {
	var rev []lockEdge
	for e := via[to]; e != nil; e = via[e.from] {
		rev = append(rev, *e)
	}
	slices.Reverse(rev)
	return rev
}

// cycleKey names a cycle by its mutexes, sorted: the same locks in a
// cycle found again (from another of its edges) are the same report.
func cycleKey(cycle []lockEdge) string {
	ms := make([]uint64, len(cycle))
	for i, e := range cycle {
		ms[i] = e.from
	}
	slices.Sort(ms)
	var b strings.Builder
	for _, m := range ms {
		b.WriteString(strconv.FormatUint(m, 16))
		b.WriteByte(' ')
	}
	return b.String()
}

// mutexes is the sorted list of the mutexes with an edge (nil: none).
func (g *lockGraph) mutexes() []uint64 {
	if p := g.nodes.Load(); p != nil {
		return *p
	}
	return nil
}

// addNode notes that m has an edge. The caller holds g.mu.
func (g *lockGraph) addNode(m uint64) {
	nodes := g.mutexes()
	if i, found := slices.BinarySearch(nodes, m); !found {
		nodes = slices.Insert(slices.Clone(nodes), i, m)
		g.nodes.Store(&nodes)
	}
}

// dropNode forgets m as a node if it has no edge left. The caller holds
// g.mu.
func (g *lockGraph) dropNode(m uint64) {
	if len(g.out[m]) > 0 || len(g.in[m]) > 0 {
		return
	}
	delete(g.out, m)
	delete(g.in, m)
	nodes := g.mutexes()
	if i, found := slices.BinarySearch(nodes, m); found {
		nodes = slices.Delete(slices.Clone(nodes), i, i+1)
		g.nodes.Store(&nodes)
	}
}

// forget drops every edge of m (destroyed, or its memory released): a
// new mutex at its address starts with none. It reports whether there
// were any.
func (g *lockGraph) forget(m uint64) bool {
	return g.forgetRange(m, 1)
}

// forgetRange drops the edges of every mutex in [addr, addr+size) and
// reports whether there were any.
func (g *lockGraph) forgetRange(addr, size uint64) bool {
	if !g.holds(addr, size) {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	nodes := g.mutexes()
	i, _ := slices.BinarySearch(nodes, addr)
	var gone []uint64
	for ; i < len(nodes) && nodes[i]-addr < size; i++ {
		gone = append(gone, nodes[i])
	}
	var ends []uint64 // the other ends of the edges dropped
	for _, m := range gone {
		for to := range g.out[m] {
			delete(g.in[to], m)
			ends = append(ends, to)
		}
		for from := range g.in[m] {
			delete(g.out[from], m)
			ends = append(ends, from)
		}
		delete(g.out, m)
		delete(g.in, m)
		g.dropNode(m)
	}
	for _, m := range ends {
		g.dropNode(m)
	}
	return len(gone) > 0
}

// holds says whether a mutex of the graph lies in [addr, addr+size).
func (g *lockGraph) holds(addr, size uint64) bool {
	nodes := g.mutexes()
	i, _ := slices.BinarySearch(nodes, addr)
	return i < len(nodes) && nodes[i]-addr < size
}

// cyclesFound is the number of cycles reported.
func (g *lockGraph) cyclesFound() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.reported)
}

// lockOrderNote is called at t's lock of addr (abi.Lock* bits in mode)
// before its locksets change: a lock the C side marked abi.LockOrder
// waits, with the mutexes t holds, for the stack that follows
// (lockOrderStack).
func (d *Detector) lockOrderNote(t *thread, addr, mode uint64) {
	if !d.opts.Deadlocks || mode&abi.LockOrder == 0 || mode&abi.LockTry != 0 || t.depth.count(addr) > 0 {
		return
	}
	for _, h := range t.depth {
		t.orderPending = append(t.orderPending, lockPair{h.mutex, addr})
	}
}

// lockOrderStack adds t's acquisitions waiting for a stack to the graph
// with stack and reports the cycles they close. The C side asks for the
// stack in the flush that handed the acquisitions over (a wrapper's), so
// none waits past it; t.orderPending is t's own, like its locksets.
func (d *Detector) lockOrderStack(t *thread, stack []uint64) {
	if len(t.orderPending) == 0 {
		return
	}
	pending := t.orderPending
	t.orderPending = nil
	if len(pending) > 0 && stack != nil {
		stack = slices.Clone(stack)
	}
	for _, p := range pending {
		if cycle := d.order.add(p.from, p.to, threadOf(t), stack); cycle != nil {
			d.rep.lockCycle(cycle)
		}
	}
}

// mutexGone drops the edges of the mutexes in [addr, addr+size): one was
// destroyed, or a heap block released. The C side's filter of pairs seen
// forgets them too (Host.ForgetLockPairs), so that a mutex made later at
// the same address gets its edges.
func (d *Detector) mutexGone(addr, size uint64) {
	if d.order.forgetRange(addr, size) {
		d.host.ForgetLockPairs()
	}
}
