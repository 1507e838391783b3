package detect

// Condition variables with lost signals and shared condition variables
// (dissertation ch. 6, listing 6.2, algorithm 2), under HG_OPTIONS lsd:
//
//   - no: a completed wait acquires what signals released on the condition
//     variable (ch. 5.1.2). A waiter whose loop finds the condition true
//     before it ever waits gets no edge (a lost signal: false reports).
//   - yes: the rewriter marks the waits inside wait-enclosing loops and
//     hooks every exit of those loops (patch/hooks.go). A marked wait only
//     remembers its condition variable; the loop exit acquires the
//     condition variable's one "fake" segment TS_cv, which every signal
//     joins, whether or not the wait ran.
//   - wr (default): as yes, but the loop exit (and an unmarked wait) first
//     looks for write/read relations: the variables the waiter read in its
//     lock-protected region that a signaller wrote in its region before
//     signalling. It acquires those signallers' segments only, and falls
//     back to TS_cv when there is none. Two signaller/waiter pairs sharing
//     one condition variable (fig. 6.3) then stay unordered.
//
// A thread's region starts at its outermost lock and ends when that mutex
// is unlocked (locks nested inside, and the mutex a wait releases and
// re-acquires, do not end it). In it, the thread's reads
// and writes are recorded; writes stop being recorded at a signal.

// condState is one thread's view of its current lock-protected region
// (touched only by the thread itself). The region's reads and writes are
// recorded by the C side (hgrt.h rec_r/rec_w, fastpath.c hg_record), so
// that its accesses keep the fast path; load copies them from the
// thread's Region when a wait, signal or region end needs them (always
// while the region they describe is the thread's current one: see
// runtime/wrappers.c).
type condState struct {
	recording bool
	reads     []uint64
	readsAll  bool // the region read more than reads holds (Region.Recorded)
	writes    []uint64
	loopCV    uint64 // condition variable of the last marked wait in the current wait loop
	loopWait  bool   // a marked wait ran since the last loop exit
	waited    bool   // a wait completed in this region: its end looks for more write/read relations
	joined    int    // reads[:joined] were joined at the region's last wait (handleWait)
}

func (c *condState) begin() {
	c.recording, c.waited, c.joined = true, false, 0
}

func (c *condState) end() {
	c.recording, c.waited, c.joined = false, false, 0
	// A wait loop left through an edge without a hook must not lend its
	// condition variable to a later loop.
	c.loopCV, c.loopWait = 0, false
}

// load copies the thread's recorded reads and writes from its Region
// (none without one).
func (c *condState) load(r Region) {
	c.reads, c.writes, c.readsAll = c.reads[:0], c.writes[:0], false
	if r != nil {
		c.reads, c.writes, c.readsAll = r.Recorded(c.reads, c.writes)
	}
}

// regionEnd runs at the unlock that ends t's lock-protected region. If a
// wait completed in the region (a loop exit or an unmarked wait), the
// reads made after it, up to the unlock, are searched for write/read
// relations too: a consumer that takes an element from a queue reads the
// queue's links after the loop condition (dissertation fig. 6.7), and the
// signaller that wrote those links published the element. Only relations
// found are added (no fallback to TS_cv). The reads before the wait were
// searched when it completed, with the mutex held from then on: no
// region under it published anything since. (Searched again, they cost
// the pipeline's every region a look-up per read in the published
// writes.)
//
// The writes (up to a signal) of every region under a mutex used with
// condition variables (hgrt.h HG_LOCK_CVM), and of every region that
// waited, become write/read relations at its end (DS(d) <- TS_t), as a
// signal makes them: a notifier that sets
// the flag under the mutex and signals after unlocking (the common C++
// idiom) is then found by a waiter that reads the flag before the signal
// is sent; and the consumer that unlinks an element writes the queue head
// the next consumer reads, passing on what it learnt about the element's
// producer. runtime/wrappers.c hands such a region to the Go side before
// the mutex is released. This departs from algorithm 2, where only
// signalling regions record writes.
func (d *Detector) regionEnd(t *thread, mutex uint64, exclusive, cvMutex, own bool) {
	wr := d.opts.LSD == "wr"
	publish := d.opts.Handoff || wr && cvMutex
	joinReads := wr && t.cond.waited
	if !own || !publish && !joinReads {
		t.cond.end() // nothing to publish, or the record is a later region's
		return
	}
	t.cond.load(t.rec)
	if joinReads && t.cond.joined < len(t.cond.reads) {
		d.wrSeg.joinInto(t, t.cond.reads[t.cond.joined:])
	}
	var seg wrSeg
	wrote := publish && len(t.cond.writes) > 0
	if wrote {
		seg = d.segmentOf(t, mutex, exclusive)
		d.publish(&seg, t.cond.writes)
	}
	if d.opts.Handoff && len(t.cond.reads) > 0 {
		if !wrote || !exclusive || len(t.depth) > 0 {
			// the two differ: reads are published under the locks
			// held in either mode, writes under those held for writing
			seg = d.readSegmentOf(t, mutex)
		}
		d.rdSeg.put(&seg, t.cond.reads, t.cond.readsAll)
	}
	d.tick(t)
	t.cond.end()
}

// signal is HANDLE_SIGNAL: the variables t wrote in its region map to
// t's current segment (DS(d) <- TS_t), TS_cv joins TS_t, and t starts a new
// segment. A signal sent after the unlock publishes the writes of the
// region that ended (the C record keeps them until the next region), as
// written under that region's mutex. A signal that travels with its
// region's hand-over (atEnd) leaves the writes to the region's end,
// which publishes them all in a later segment of t: published here too,
// they cost a second snapshot and a second put per variable in every
// such region (a queue's push and pop: bench/pipeline.c).
func (d *Detector) signal(t *thread, cv uint64, atEnd bool) {
	if (d.opts.LSD == "wr" || d.opts.Handoff) && !atEnd {
		t.cond.load(t.rec)
		if len(t.cond.writes) > 0 {
			seg := d.segmentOf(t, t.regionMutex, !t.regionRead)
			d.publish(&seg, t.cond.writes)
		}
	}
	// The signal took the region's writes: the C side empties its record
	// (and records later writes only for hand-offs).
	t.cond.writes = t.cond.writes[:0]
	d.release(t, cv)
}

// waitDone runs when a condition wait returns (woke: not by a timeout).
func (d *Detector) waitDone(t *thread, cv uint64, inLoop, woke bool) {
	if inLoop && d.opts.LSD != "no" {
		t.cond.loopCV, t.cond.loopWait = cv, true
		return
	}
	if woke {
		d.handleWait(t, cv)
	}
}

// loopExit is ANNOTATE_WAIT: a wait loop is left. The condition variable
// is that of the last wait the loop ran, else the one the rewriter
// recovered statically (0 if it could not).
func (d *Detector) loopExit(t *thread, static uint64) {
	if d.opts.LSD == "no" {
		return
	}
	cv := static
	if t.cond.loopWait {
		cv = t.cond.loopCV
	}
	t.cond.loopCV, t.cond.loopWait = 0, false
	d.handleWait(t, cv)
}

// handleWait is HANDLE_WAIT: with lsd=wr, acquire the segments of the
// signallers that wrote what t read in its region; else (or when there is
// none) acquire TS_cv. cv 0 (unknown) leaves only the write/read relation.
func (d *Detector) handleWait(t *thread, cv uint64) {
	found := false
	if d.opts.LSD == "wr" {
		t.cond.load(t.rec)
		found = d.wrSeg.joinInto(t, t.cond.reads)
		t.cond.joined = len(t.cond.reads)
	}
	if !found && cv != 0 {
		d.syncVC.joinInto(t, cv)
	}
	t.cond.waited = t.cond.recording
	d.tick(t)
}
