package detect

import (
	"sync"
	"sync/atomic"

	"hgrewrite/abi"
	"hgrewrite/msm"
	"hgrewrite/runtime/hgopts"
	"hgrewrite/shadow"
)

// Detector runs Helgrind+'s hybrid algorithm over the events of one
// process. A thread's own state (vector clock, locksets) is touched only by
// that thread, since every call arrives on the thread the event belongs to;
// shared tables are guarded by mu, shadow cells by the shadow memory's
// striped locks (see the package documentation).
type Detector struct {
	opts    hgopts.Options
	machine msm.Machine
	bias    uint64 // load bias of the main program (0 unless PIE)
	host    Host

	mem   *shadow.Memory
	locks *shadow.Locksets
	tsets *shadow.Threadsets

	mu       sync.Mutex
	threads  []*thread        // by tid: the current occupant of each id
	occupant occupants        // the same, read without d.mu (thread)
	freed    []freedTID       // ids of joined threads, to reuse (threads.go)
	detached []freedTID       // ids of detached threads that exited, oldest first (threads.go)
	handles  map[uint64]int32 // pthread_t -> tid, of joinable threads (ThreadJoin)
	named    map[uint64]int32 // pthread_t -> tid, of every live thread registered (ThreadName)
	barriers map[uint64]*barrier
	syncVC   syncClocks // release/acquire objects: cond vars, semaphores, atomics (sync.go)
	wrSeg    *wrSegs    // DS of the write/read relation (cond.go)
	rdSeg    *readLog   // the readers' side of lock hand-offs (readlog.go, reverse hand-offs)
	rep      reporter
	heap     heapBlocks
	order    lockGraph    // lock-order inversions (lockorder.go)
	benign   benignRanges // ranges whose races are not reported (benign.go)

	finished       atomic.Bool
	tooManyThreads sync.Once
	historyWaited  atomic.Int64 // steps that waited for an owner's history (historyLags)
}

// thread is the detector's view of one program thread.
type thread struct {
	tid          int32
	earlier      int          // threads that had this id before (threads.go, reuse)
	past         []pastThread // the last few of them, newest first, for reports
	detached     bool         // never to be joined (ThreadDetach)
	released     bool         // its id is offered for reuse
	vc           *shadow.VC
	clocks       []uint64 // vc as the C fast path reads it (Host.ClockRow), nil without one
	mirrored     int      // entries of clocks that may be non-zero
	held         uint32   // lockset id of all locks held (guards reads)
	writeHeld    uint32   // lockset id of locks held in write mode (guards writes)
	parent       int32
	createPC     uint64   // link-time pc inside the pthread_create call (creation.pc), 0 if unknown
	createStack  []uint64 // the creator's call stack (creation.stack), nil for the main thread
	name         string   // given by the program (ThreadName), "" if none; under Detector.mu
	exitVC       *shadow.VC
	depth        heldLocks                    // the locks held, and how many times each (recursive mutexes, read locks taken twice)
	env          msm.Env                      // env{d, t}, made once: an interface value per access would allocate
	cond         condState                    // lock-protected region recording (cond.go)
	snap         *shadow.VC                   // snapshot of vc for published segments, nil after a join (handoff.go)
	det          *Detector                    // for the tables its end materializes (handoff.go)
	cmade        []uint32                     // materialize's buffer
	lastSnap     *shadow.VC                   // the snapshot before snap (materialize)
	overKnown    [4]uint64                    // ids of overflow segments t's clock already covers (handoff.go news)
	syncKnown    [abi.SyncKnown]acquiredStamp // synchronisation objects t's clock holds up to a release stamp (sync.go)
	regionMutex  uint64                       // the mutex of the current region, or of the last one (handoff.go)
	regionRead   bool                         // regionMutex was taken in read mode: it orders no writes (handoff.go)
	pending      []*raceReport                // reports waiting for the thread's stack (reporter.emit), under reporter.mu
	npending     atomic.Int32                 // len(pending), read without the lock at every flush (pendingCount)
	accessSP     uint64                       // the program's stack pointer at the access being checked, 0 if unknown (reportstack.go)
	rec          Region                       // the thread's region recording, set at every flush (cond.go reads it)
	tsetGen      uint32                       // the threadsets' generation when the flush began (Region.KnowMember)
	orderPending []lockPair                   // acquisitions waiting for the thread's stack to enter the lock-order graph (lockorder.go)
}

// New starts a detector: it maps the shadow memory (outside the Go heap).
// No thread exists yet; the caller registers itself with MainThread.
func New(cfg Config, host Host) (*Detector, error) {
	mem := cfg.Memory
	if mem == nil {
		var err error
		if mem, err = shadow.NewMemory(); err != nil {
			return nil, err
		}
	}
	d := &Detector{opts: cfg.Options, bias: cfg.Bias, host: host, mem: mem,
		locks: shadow.NewLocksets(), tsets: shadow.NewThreadsets(),
		handles: map[uint64]int32{}, named: map[uint64]int32{}, barriers: map[uint64]*barrier{},
		wrSeg: newWrSegs(func(keys uintptr) { host.PublishHandoffTable(HandoffWrites, keys, wrSegBits) }),
		rdSeg: newReadLog(ReadLogBits, func(base uintptr) { host.PublishHandoffTable(HandoffReads, base, ReadLogBits) })}
	if cfg.LocksetMirror != nil {
		d.locks.SetMirror(cfg.LocksetMirror)
	}
	d.wrSeg.table.snapAt, d.rdSeg.snapAt = d.snapAt, d.snapAt
	d.syncVC.init(host)
	if cfg.Options.MSM == "long" {
		d.machine = msm.Long
	}
	d.rep.init(d, cfg.Exe, cfg.Pid)
	if err := d.rep.loadSuppressions(cfg.Options.Suppressions); err != nil {
		return nil, err
	}
	return d, nil
}

// ShadowBase is the shadow memory's directory, for the C fast path
// (shadow.Memory.DirectoryBase).
func (d *Detector) ShadowBase() uintptr { return d.mem.DirectoryBase() }

// SplitBase is the reservation of split granules' side cells, for the C
// fast path (shadow.Memory.SplitBase).
func (d *Detector) SplitBase() uintptr { return d.mem.SplitBase() }

// MainThread registers the calling thread, the process's first, and
// returns its id (0).
func (d *Detector) MainThread() int32 { return d.newThread(nil, creation{}).tid }

// newThread registers a thread whose vector clock starts from parent's,
// under the id of a joined thread when one may be reused (reuseLocked),
// else under a new one; nil when every id (abi.MaxThreads) is taken and
// none may be reused for parent.
func (d *Detector) newThread(parent *thread, at creation) *thread {
	d.mu.Lock()
	defer d.mu.Unlock()
	tid, earlier, floor := int32(len(d.threads)), 0, uint64(0)
	if parent != nil {
		if u, final, ok := d.reuseLocked(parent); ok {
			tid, earlier, floor = u, d.threads[u].earlier+1, final
		}
	}
	if earlier == 0 && len(d.threads) >= abi.MaxThreads {
		return nil
	}
	t := &thread{tid: tid, earlier: earlier, vc: shadow.NewVC(uint16(tid)), parent: -1,
		createPC: at.pc, createStack: at.stack}
	if earlier > 0 {
		t.past = pastOf(d.threads[tid])
	}
	if parent != nil {
		t.vc = parent.vc.Copy()
		t.parent = parent.tid
	}
	if t.vc.Get(uint16(tid)) < floor {
		t.vc.Set(uint16(tid), floor) // above every epoch of the earlier thread, once ticked
	}
	if t.clocks = d.host.ClockRow(tid); t.clocks != nil {
		if earlier > 0 {
			clear(t.clocks[:d.threads[tid].mirrored]) // the earlier thread's
		}
		t.mirror(t.vc)
	}
	t.env, t.det = env{d, t}, d
	if earlier > 0 {
		d.threads[tid] = t
		d.host.PublishLocks(tid, 0, 0) // the earlier thread's are not t's
	} else {
		d.threads = append(d.threads, t)
	}
	d.occupant.set(tid, t)
	d.tick(t)
	return t
}

// occupants is the current occupant of each thread id, read without
// the detector's mutex: every call into the detector looks its thread up
// (thread), from whichever processor the thread runs on, and a mutex
// taken there moved its cache line between them at every call (locks.c:
// a million calls). Chunks of ids are made by the first occupant of one
// of their ids, under d.mu, as are the entries.
type occupants struct {
	chunks [abi.MaxThreads / occupantChunk]atomic.Pointer[[occupantChunk]atomic.Pointer[thread]]
}

const occupantChunk = 1024

func (o *occupants) set(tid int32, t *thread) {
	c := o.chunks[tid/occupantChunk].Load()
	if c == nil {
		c = new([occupantChunk]atomic.Pointer[thread])
		o.chunks[tid/occupantChunk].Store(c)
	}
	c[tid%occupantChunk].Store(t)
}

func (o *occupants) get(tid int32) *thread {
	if tid < 0 || tid >= abi.MaxThreads {
		return nil
	}
	if c := o.chunks[tid/occupantChunk].Load(); c != nil {
		return c[tid%occupantChunk].Load()
	}
	return nil
}

func (d *Detector) thread(tid int32) *thread { return d.occupant.get(tid) }

// live is the thread tid while detection runs, else nil.
func (d *Detector) live(tid int32) *thread {
	t := d.thread(tid)
	if t == nil || d.finished.Load() {
		return nil
	}
	return t
}

// tick starts a new segment of t and tells the C fast path the new epoch,
// so that it can skip accesses that cannot change a cell.
func (d *Detector) tick(t *thread) {
	t.vc.Tick(uint16(t.tid))
	d.host.PublishEpoch(t.tid, uint64(t.epoch()))
}

// epoch is TS_t, the current segment of t, as stored in shadow cells
// (shadow.CellEpoch: the tid and the low bits of the clock).
func (t *thread) epoch() msm.Epoch {
	return msm.Epoch(shadow.CellEpoch(uint16(t.tid), t.vc.Get(uint16(t.tid))))
}

func epochTID(e msm.Epoch) uint16 { return shadow.CellEpochTID(uint64(e)) }

// Finish ends detection and prints the reports still waiting for a stack
// and the summary; it returns the number of racy contexts and lock-order
// inversions found. Later
// calls (and events) are ignored; they return 0.
func (d *Detector) Finish() int {
	if d.finished.Swap(true) {
		return 0
	}
	d.mu.Lock()
	threads := append([]*thread(nil), d.threads...)
	d.mu.Unlock()
	for _, t := range threads {
		d.rep.emit(t, CallStack{}) // reports still waiting for a stack
	}
	return d.rep.summary()
}

// Close releases the shadow memory. No other method may run during or
// after it; the runtime never calls it (tests do).
func (d *Detector) Close() error { return d.mem.Close() }
