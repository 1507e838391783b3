/* hgrt.h: the contract between rewritten executables and the runtime, and
 * the runtime's C-side declarations, in three sections:
 *
 *   1. the contract with rewritten executables: the header and the info
 *      word (the numbers are in hgabi.h, generated from package abi);
 *   2. what the Go side sees through cgo (this header is the cgo
 *      preamble's): the per-thread record and its events, the options, the
 *      variables the Go side fills and the C functions it calls;
 *   3. what the runtime's C files use of each other, by the file that owns
 *      each name.
 *
 * The C files' private plumbing (the entry points and their attributes,
 * the thread-record internals fastpath.c and threads.c share, names that
 * were static once and are hidden now) is in rt_internal.h, which the Go
 * side does not see. Each function is declared once, here or there.
 */
#ifndef HGRT_H
#define HGRT_H
#include <stdint.h>

#include "hgabi.h" /* the numbers of the contract, generated from package abi */

/* ==== 1. The contract with rewritten executables ====
 *
 * elfrw/write.go lays out the header below at the start of the data segment
 * that hgrewrite adds to every rewritten executable; the runtime finds it by
 * its magic and fills the two entry slots. Trampolines call through the slots
 * with rdi = address, rsi = info word (abi.Info), rdx = element count (range
 * entry only).
 */
struct hg_header {
	char magic[8];
	uint32_t version;
	uint32_t flags;
	uint64_t text_addr; /* link-time address of the trampoline segment */
	uint64_t text_size;
	uint64_t slot_access; /* void (*)(uint64_t addr, uint64_t info) */
	uint64_t slot_range;  /* void (*)(uint64_t addr, uint64_t info, uint64_t count) */
	uint64_t slot_batch;  /* void (*)(const uint64_t *pairs, uint64_t n): n (addr, info) pairs */
	int64_t slot_trace;   /* the thread-pointer offset of hg_trace_cur (calltrace.c), 0 until set */
};
_Static_assert(sizeof(struct hg_header) == HG_HEADER_SIZE, "hg_header size");
_Static_assert(__builtin_offsetof(struct hg_header, version) == HG_HDR_OFF_VERSION, "hg_header.version");
_Static_assert(__builtin_offsetof(struct hg_header, flags) == HG_HDR_OFF_FLAGS, "hg_header.flags");
_Static_assert(__builtin_offsetof(struct hg_header, text_addr) == HG_HDR_OFF_TEXT_ADDR, "hg_header.text_addr");
_Static_assert(__builtin_offsetof(struct hg_header, text_size) == HG_HDR_OFF_TEXT_SIZE, "hg_header.text_size");
_Static_assert(__builtin_offsetof(struct hg_header, slot_access) == HG_HDR_OFF_SLOT_ACCESS, "hg_header.slot_access");
_Static_assert(__builtin_offsetof(struct hg_header, slot_range) == HG_HDR_OFF_SLOT_RANGE, "hg_header.slot_range");
_Static_assert(__builtin_offsetof(struct hg_header, slot_batch) == HG_HDR_OFF_SLOT_BATCH, "hg_header.slot_batch");
_Static_assert(__builtin_offsetof(struct hg_header, slot_trace) == HG_HDR_OFF_SLOT_TRACE, "hg_header.slot_trace");

/* A thread's call trace (calltrace.c; the layout is abi's): the program's
 * function entries, in a ring of HG_TRACE_BYTES. */
struct hg_trace {
	uint16_t pos; /* the next entry's byte offset in w; wraps by itself */
	uint16_t pad[7];
	uint64_t w[HG_TRACE_BYTES / 8];
};
_Static_assert(__builtin_offsetof(struct hg_trace, w) == HG_TRACE_HEADER, "the glue's trace layout");
/* the rings of thread ids, HG_TRACE_CHUNK ids per mapping, NULL until one
 * of them is used (calltrace.c; the Go side marks epochs there) */
#define HG_TRACE_CHUNK 64
extern struct hg_trace *_Atomic hg_trace_chunks[HG_MAX_THREADS / HG_TRACE_CHUNK];
int hg_trace_copy(int32_t tid, uint64_t *out);

/* The info word. */
#define HG_INFO_PC(i) ((uint32_t)(i))
#define HG_INFO_SIZE(i) ((uint32_t)(((i) >> HG_INFO_SIZE_SHIFT) & 0xffff))
#define HG_INFO_FLAGS(i) ((uint32_t)(((i) >> HG_INFO_FLAGS_SHIFT) & 0xffff))
/* HG_INFO packs an info word; HG_INFO(0, 0, f) is the flag bits f alone,
 * to set or clear them in a word. */
#define HG_INFO(pc, size, flags)                                                  \
	((uint64_t)(uint32_t)(pc) | (uint64_t)(uint16_t)(size) << HG_INFO_SIZE_SHIFT | \
	 (uint64_t)(uint16_t)(flags) << HG_INFO_FLAGS_SHIFT)

/* ==== 2. Shared with the Go side (cgo) ==== */

/* One buffered access, handed to the Go side in batches. len is the byte
 * length for string-instruction ranges and 0 for single accesses (whose
 * size is in the info word). */
struct hg_event {
	uint64_t addr;
	uint64_t info;
	uint64_t len;
};

#define HG_EVENTS 1024
#define HG_SIG_EVENTS 32 /* accesses of signal handlers kept per thread between flushes (threads.c) */
#define HG_REC 32
#define HG_HELD 8 /* mutexes whose hold counts the lock view keeps (lockview.c) */
#define HG_FREE_CHECK 4096 /* bytes of a released block checked as written (runtime/detect/heap.go, freeCheckBytes) */
#define HG_LKC 128 /* lockset transitions the lock view remembers (lockview.c) */
#define HG_LKC_Q 8  /* transitions one flush hands the lock view (lockview.c, hg_lkc_drain) */
#define HG_TSETS 64 /* threadsets a thread's record knows it belongs to (fastpath.c) */
#define HG_CMADE 512 /* hand-off table ways a record remembers writing in C (regionpub.c) */
#define HG_SNAPS 32  /* entries of a thread's snapshot ring (rt_internal.h, struct hg_snaps) */

/* A lockset transition the Go side made (lockview.c): the thread's lockset
 * ids before and after an operation on a mutex. */
struct hg_lkc {
	uint64_t before;
	uint64_t key; /* mutex << 2 | HG_LOCKSTEP_* (never 0) */
	uint64_t after;
};

/* A transition as the Go side hands it over (hg_thread.lkc_q). */
struct hg_lkc_step {
	uint64_t before, after, mutex;
	uint64_t op; /* HG_LOCKSTEP_* */
};
#define HG_NEST 4 /* nested locks remembered per region */
#define HG_OPAQUE 8 /* mutexes held that unrewritten code locked, tracked per thread */

/* Why the fast path handed an access to the Go side (stats=1): the state
 * of its cell, or what kind of event it was. */
enum {
	HG_DEFER_NEW,         /* never accessed since reset */
	HG_DEFER_OWN,         /* this thread's, but the owner's lockset changes */
	HG_DEFER_LOCKS_UNKNOWN, /* this thread's, and the lock view does not know the thread's locksets (lockview.c) */
	HG_DEFER_OTHER_EXCL,  /* another thread's exclusive location: a new owner, or a race */
	HG_DEFER_SHARED,      /* a shared state */
	HG_DEFER_SYNC,        /* a synchronisation variable */
	HG_DEFER_RACE,        /* already raced */
	HG_DEFER_SPLIT,       /* a split granule */
	HG_DEFER_UNMAPPED,    /* no shadow chunk yet */
	HG_DEFER_RANGE,       /* a string instruction's range */
	HG_DEFER_SYNC_EVENT,  /* an atomic, a loop hook or a spin access */
	HG_DEFER_KINDS
};

/* Per-thread record (threads.c). The counters live in an arena and are
 * never freed, so totals survive thread exit; the event buffer is mapped
 * per thread. */
struct hg_thread {
	uint64_t accesses; /* single accesses */
	/* the thread's row of hg_tstate (hg_set_tid), NULL while it has no id:
	 * a move names its cell there (hg_move_begin) without finding the row */
	struct hg_tstate *row;
	uint64_t ranges;   /* string-instruction ranges */
	uint64_t bytes;    /* bytes covered by ranges */
	uint64_t deferred[HG_DEFER_KINDS]; /* stats=1: accesses handed to the Go side, by why (fastpath.c) */
	uint64_t mark;     /* accesses + ranges when the current thread took the record (threads.c: records are reused) */
	uint64_t pub_go, pub_c; /* stats=1: regions published by the Go side, and in C (regionpub.c) */
	uint64_t go_calls;      /* stats=1: calls into the Go side: flushes, wrappers' calls, checked frees */
	uint32_t served;   /* earlier threads that used the record and made accesses */
	struct hg_thread *next;      /* every record (statistics) */
	struct hg_thread *next_free; /* records of finished threads (threads.c) */
	int32_t tid;        /* the detector's thread id, -1 until known */
	int32_t in_rt;      /* inside the runtime: accesses from signal handlers are dropped */
	uint32_t n;         /* buffered events */
	uint8_t wait_mark;  /* a wait-loop hook marked the next condition wait */
	uint8_t recording;  /* inside a lock-protected region (lsd): accesses are recorded (hg_record) */
	uint8_t waited;     /* a condition wait or wait-loop exit in this region: flush at its unlock */
	uint8_t wrote;      /* the region wrote memory: flush at its unlock (write/read relations) */
	uint8_t ignore;     /* HG_READ | HG_WRITE: the kinds of plain access ignored now (annotations.c) */
	struct hg_event *buf;
	void *xsave;        /* 64-byte aligned area for the vector state around Go calls */
	uint64_t last_atomic; /* address of the atomic access in progress */
	uint64_t access_sp;   /* the program's rsp at the access about to go to the Go side, 0 if unknown (fastpath.c) */
	uint64_t region_mutex; /* the mutex whose lock began the current region */
	uint8_t want_stack;    /* reports wait for the call stack at the next wrapper (threads.c) */
	uint8_t signalled;     /* a signal of the region waits in the buffer for its mutex's release (wrappers.c) */
	uint8_t publishing;    /* between an unlock and the end of its region's publication (wrappers.c) */
	/* A buffered event may change the thread's clock on the Go side (a
	 * join, a tick): anything but a lock or unlock that publishes
	 * nothing. While it is 0 the Go side's clock is the thread's epoch
	 * (hg_tstate), and regionpub.c may move the thread to its next segment
	 * itself. */
	uint8_t go_pending;
	uint8_t c_ticked; /* ... and the buffer holds a segment the C side began (HG_LOCK_TICKED) */
	/* the fast path joined a published segment for the access it is
	 * settling, which it settles again in the new segment (fastpath.c,
	 * hg_handoff_join) */
	uint8_t rejoined;
	/* The region left a wait loop whose exit the C side settled
	 * (fastpath.c, hg_loop_exit_c), after the reads up to hook_joined;
	 * loop_waited: a marked wait of the current wait loop completed since
	 * its last exit (the Go side then names the loop's condition
	 * variable: runtime/detect, loopExit). */
	uint8_t waited_c, hook_joined, loop_waited;
	/* A signal of the region on this condition variable, which the C
	 * side releases after the mutex's release, or else hands to the Go
	 * side (wrappers.c, hg_signal_settle); 0: none. */
	uint64_t cv_signal;
	/* The thread's own clock when its vector clock last took in another
	 * (a join on the Go side, cRecord.KnowJoin); ~0 until the Go side has
	 * seen the thread. A reader-log way published at a later clock holds
	 * the thread's clock as it is now, but for its own component
	 * (regionpub.c). */
	uint64_t joined_at;
	/* The hand-off tables' ways regionpub.c wrote for the thread (their
	 * clock is in the thread's snapshot ring, hg_tstate's snaps), each
	 * table << 31 | way, until the Go side takes them and gives them
	 * their clock in place (cRecord.TakeCMade, thread.materialize); none
	 * are written once cmade is full. snap_keep is the oldest entry of
	 * the ring they may name (the newest at the last take): the ring
	 * takes no entry in its place until the next. */
	uint8_t region_read; /* the region's mutex was taken in read mode (wrappers.c) */
	uint16_t ncmade;
	uint32_t cmade[HG_CMADE];
	uint64_t snap_keep;
	/* What the fast path knows of the thread's locks (lockview.c): how
	 * many are held (lock events minus unlock events), the thread's
	 * lockset ids as hg_tstate holds them (lk, valid while locks_known:
	 * taken from hg_tstate at every flush, then carried across lock and
	 * unlock events through the transitions the Go side made before), and
	 * the mutexes held with their hold counts (a release that leaves a
	 * count changes no lockset). held_over: more were held than the table
	 * keeps, until none is. */
	uint8_t locks_known;
	uint8_t lkc_evicted; /* the lock view's cache was full once: what the thread learns goes to the shared table too (lockview.c) */
	uint8_t nheld_tab, held_over;
	int32_t nheld;
	uint64_t lk;
	uint64_t held_m[HG_HELD];
	uint32_t held_n[HG_HELD];
	uint64_t lk_mismatch; /* flushes that found lk wrong (stats; a bug if ever nonzero) */
	/* the transitions, direct-mapped by key; written only by the
	 * thread's own Go-side processing, inside its flushes */
	struct hg_lkc lkc[HG_LKC];
	/* transitions the Go side made in the flush running now, for the
	 * cache once it returns (Region.NoteLockStep writes them: a call into
	 * C from inside a flush costs a scheduler transition) */
	struct hg_lkc_step lkc_q[HG_LKC_Q];
	uint32_t nlkc_q;
	/* Threadsets known to hold this thread, direct-mapped by id, each
	 * hg_tset_gen << 32 | id: the fast path leaves a shared location
	 * alone when the access would not change it (fastpath.c,
	 * hg_shared_unchanged). Written by the thread's own Go-side
	 * processing (cRecord.KnowMember). */
	uint64_t tsets[HG_TSETS];
	/* the overflow segment of each hand-off table that the thread
	 * knows (fastpath.c, hg_handoff_news; cRecord.KnowOverflow) */
	uint64_t over_known[2];
	/* Synchronisation objects whose releases up to stamp the thread's
	 * clock holds (cRecord.KnowAcquired), direct-mapped by (obj >> 3)
	 * mod HG_SYNC_KNOWN: an atomic's acquire finds nothing new while the
	 * object's stamp stays (fastpath.c, hg_acquire_known). exact, if
	 * not 0, is the thread's own clock when its clock became the
	 * object's but for that component: until a later join (joined_at)
	 * the fast path releases on the object itself (hg_release_known).
	 * Written by the thread's own Go-side processing, and by that fast
	 * path. */
	struct {
		uint64_t obj, stamp, exact;
	} acq[HG_SYNC_KNOWN];
	/* Signal handlers the thread is running (signals.c): in_rt is set
	 * for their duration, and restored to sig_saved_rt. */
	int32_t sig_depth;
	int32_t sig_saved_rt;
	/* Signals whose handler ran since the last flush (bit sig-1), and
	 * the buffer position at the first: the flush puts their acquires
	 * there (signals.c, hg_sig_acquires). */
	uint64_t sig_acq;
	uint32_t sig_mark;
	/* Accesses made by the thread's signal handlers since the last flush
	 * (threads.c, hg_sig_access), each with the buffer position it goes
	 * to; only handlers append, only the flush takes them. */
	struct hg_event *sig_buf; /* HG_SIG_EVENTS, in the buffer's mapping */
	uint32_t *sig_pos;
	uint32_t sig_n;
	uint32_t sig_dropped; /* handler accesses that found sig_buf full */
	/* The current lock-protected region's reads and writes (lsd, the
	 * write/read relation of runtime/detect/cond.go), recorded here so that its
	 * accesses can still take the fast path; writes stop at a signal.
	 * rec_r_all: the region read more distinct addresses than rec_r
	 * keeps; its reads stand for every variable (readlog.go's rlAll). */
	uint8_t nrec_r, nrec_w, rec_writes_on, rec_r_all;
	/* a bit per hash of each address in rec_r (hg_record): a read whose
	 * bit is clear is not there, and needs no search */
	uint64_t rec_r_seen;
	/* locks taken inside the region (hand-offs under a nested lock): each
	 * mutex and the number of writes recorded when it was taken */
	uint8_t nnest;
	uint8_t nest_mark[HG_NEST];
	uint64_t nest_mutex[HG_NEST];
	uint64_t rec_r[HG_REC];
	uint64_t rec_w[HG_REC];
	/* mutexes held that code outside the rewritten program locked
	 * (wrappers.c, hg_opaque_lock): most recent last */
	uint8_t nopaque;
	uint64_t opaque_m[HG_OPAQUE];
	/* dynamic annotations (annotations.c): the nesting of the thread's
	 * ignore-reads and ignore-writes sections; ignore says which are open */
	int32_t ignore_reads, ignore_writes;
};

/* Options, parsed from HG_OPTIONS by the Go side at start-up. */
struct hg_options {
	int err_fd; /* a private duplicate of stderr: programs may close fd 2 before exit */
	int stats;
	int verbosity;
	int detect;   /* race detection on (off: only counting) */
	int exitcode; /* exit status when races were reported; 0 keeps the program's */
	int lsd;      /* condition variables: 0 no, 1 yes, 2 wr (hgopts.Options.LSD) */
	int spin;     /* spinning-read loops synchronise */
	int handoff;  /* lock hand-offs: every region's writes are published at its unlock (runtime/detect/handoff.go) */
	int deadlocks; /* lock-order inversions: new pairs of locks are marked and their stacks taken (lockorder.c) */
	char log_path[4096];
};

extern struct hg_options hg_opts; /* start.c */

/* The fast path's view of the detector, filled by the Go side: each
 * thread's row (hg_tstate: its current epoch and its locksets) and the shadow
 * memory's directory (shadow.c; package shadow: 8-byte granules, 32-byte
 * cells, 4 MiB chunks).
 *
 * A row is written by its own thread (its callbacks into Go, regionpub.c;
 * its creator before it runs) and read by it at every access, so each has
 * a cache line of its own: packed, eight threads' epochs shared a line,
 * and every tick of one of them (a read-locked region ends with one)
 * took the line from the others' caches (bench/readmostly.c, five
 * threads: 15% of the fast path's samples on the load of the epoch). */
struct hg_tstate {
	uint64_t epoch; /* tid << SH_TID_SHIFT | clock (epochs.go) */
	/* lockset ids (runtime/detect, Host.PublishLocks): all locks held in
	 * the low half, those held in write mode in the high half */
	uint64_t locks;
	/* The cell the thread's fast path is moving to its segment, 0 when
	 * none (fastpath.c, hg_move_begin): named before the compare-and-swap
	 * of word 0, cleared after the stores of words 1 to 3. A Go-side step
	 * of another thread on the cell waits while this names it
	 * (Host.OwnerMoving). Here rather than in the thread's record, so that
	 * a forked child's detector, which shares this array (remote.c), sees
	 * it too. */
	uint64_t moving;
	/* The address of the thread's snapshot ring (struct hg_snaps,
	 * rt_internal.h; 0 until the thread's C side first publishes a
	 * region), where a hand-off way the C side wrote for the thread
	 * finds its clock by its epoch: regionpub.c writes it, other threads'
	 * C sides (hg_snap_at) and the Go side (snapshotAt) read it. */
	uint64_t snaps;
	uint64_t pad[4];
};
extern struct hg_tstate hg_tstate[HG_MAX_THREADS]; /* fastpath.c */
/* Addresses below Linux's default vm.mmap_min_addr are never mapped: an
 * access there faults (a null-pointer dereference, perhaps recovered
 * from by a SIGSEGV handler) and touches no memory. */
#define HG_UNMAPPABLE 0x10000u
/* The generation of threadsets (fastpath.c): the Go side counts it up
 * whenever threadsets are retired (a thread ended; its threadsets forward
 * to smaller ones), which makes every record's tsets entry stale. */
extern uint32_t hg_tset_gen;
/* Each thread's vector clock as the Go side mirrors it (fastpath.c,
 * hg_clock_row): row tid, entry u is the clock of thread u that thread tid
 * knows. NULL until the first row is asked for, and in a forked child. */
extern uint64_t *hg_clocks;
/* One more than the highest thread id given to a thread (threads.c,
 * hg_set_tid): a component of any clock is below it, since a thread's
 * component reaches other clocks only through its own releases. */
extern uint32_t hg_tid_hw;
uint64_t *hg_clock_row(int32_t tid); /* fastpath.c: row tid, mapped on first use; NULL if it cannot be */
/* The hand-off tables' memory: 0 the published writes' keys (looked up
 * by reads; runtime/detect/segtable.go, handoffMemory), 1 the reader log (looked
 * up by writes; readlog.go, handoffMemory): set once each, when the Go side
 * makes the table, HG_HANDOFF_IN_HEAP when it is in the Go heap. */
void hg_publish_handoff(int table, uintptr_t keys, uint32_t bits); /* fastpath.c */
void hg_lkc_note(int32_t tid, uint64_t before, uint64_t after, uint64_t mutex, uint32_t op); /* lockview.c: the Go side changed tid's locksets */
void hg_lkc_drain(struct hg_thread *t); /* lockview.c: the transitions of lkc_q go into the cache */
void hg_lkg_forked(void); /* lockview.c: a forked child's ids are not the parent's: the shared table goes unused */
void hg_set_shadow_dir(uintptr_t dir);     /* shadow.c */
void hg_set_split_base(uintptr_t base);    /* shadow.c: side cells of split granules (shadow.Memory.SplitBase), 0: none */

/* A forked child's detector runs in a process of its own (remote.c, the
 * child's side; serve.go, the detector's): the child's calls into the
 * detector go over a socket, one packet each: a request, then its payload
 * (flush: the events, then the region recording; stack: the return
 * addresses). The detector answers every request with a reply. */
enum hg_op {
	HG_OP_HELLO = 1, /* payload: struct hg_hello; reply: the main thread's id, or -1 */
	HG_OP_FLUSH,
	HG_OP_STACK,
	HG_OP_THREAD_CREATE,
	HG_OP_THREAD_HANDLE,
	HG_OP_THREAD_EXIT,
	HG_OP_THREAD_JOIN,
	HG_OP_BARRIER_INIT,
	HG_OP_BARRIER_ARRIVE,
	HG_OP_BARRIER_LEAVE,
	HG_OP_RELEASE,
	HG_OP_ACQUIRE,
	HG_OP_FINISH,
	HG_OP_FREE,
	HG_OP_THREAD_DETACH,
	HG_OP_THREAD_NAME,
	HG_OP_BENIGN,
};

struct hg_req {
	uint32_t op;
	int32_t tid;
	uint64_t a[3];
	uint32_t n1, n2; /* payload bytes: first and second part */
};

struct hg_rep {
	int64_t ret;
	int32_t halt; /* halt_on_error: the child exits now with status code */
	int32_t code;
};

/* A flush's region recording (struct hg_thread's rec_r/rec_w). */
struct hg_rec_msg {
	uint32_t nrec_r, nrec_w, rec_r_all;
	uint64_t rec_r[HG_REC];
	uint64_t rec_w[HG_REC];
};

/* What the detector process needs of the child: who it is, where its code
 * is (reports' frames; calls from the runtime), and the shared memory: the
 * memfd holds hg_tstate, then the arena (the shadow
 * directory and chunks), which both map at the same address. */
struct hg_hello {
	int64_t pid;
	uint64_t bias;              /* the main program's load bias */
	uint64_t main_lo, main_hi;  /* its code */
	uint64_t lib_lo, lib_hi;    /* this library in the child */
	uint64_t arena, arena_size; /* at offset HG_PUB_BYTES of the memfd */
};

#define HG_PUB_BYTES ((uint64_t)HG_MAX_THREADS * 64) /* hg_tstate, shared */

/* The C functions the Go side calls. */
uint64_t hg_link_pc_addr(uint64_t ra); /* ranges.c: hg_link_pc for an address held as an integer */
int hg_in_runtime(uint64_t addr);      /* ranges.c: addr is code of this library */
void hg_print(const char *line);       /* start.c: one line to the runtime's stderr or log file */
int hg_forked_threads(void);           /* start.c: a thread is created with detection off; 1: it is on now */
void hg_threads_init(void);            /* wrappers.c: count the program's threads (main thread, at start) */
void hg_threads_forked(void);          /* wrappers.c: stop counting, forget publications under way (a forked child) */
uint32_t hg_sig_acquires(struct hg_thread *t, struct hg_event *ev, uint32_t max, uint32_t *mark); /* signals.c */
void hg_halt(int code);                /* start.c: flush stdio and exit now (halt_on_error) */
char *hg_demangle(const char *name);   /* demangle.c: malloc'd, or NULL */
void hg_set_log_pid(int pid);          /* start.c: the pid log files are named by (the detector process) */
void *hg_serve_map(int memfd, uint64_t arena, uint64_t size); /* remote.c: the detector process's shared memory, at arena or NULL */
void hg_lockorder_forget(void);        /* lockorder.c: the pairs of locks seen are forgotten (Host.ForgetLockPairs) */

/* ==== 3. Between the runtime's C files, by owner ==== */

/* The shadow layout the C side derives from hgabi.h (fastpath.c, shadow.c). */
#define SH_GRANULES_PER_CHUNK (1u << (SH_CHUNK_SHIFT - SH_GRANULE_SHIFT))
#define SH_GRANULE ((uint64_t)1 << SH_GRANULE_SHIFT)  /* bytes in a granule */
#define SH_GRANULE_BYTES ((1ull << SH_GRANULE) - 1) /* a mask of all of a granule's bytes */

/* hg_hash is the multiplicative hash the runtime's tables are indexed
 * with: the top bits of key times 2^64 divided by the golden ratio (0 bits:
 * 0). The Go side's hand-off tables use the same (runtime/detect,
 * segSlotIndex), so that the fast path finds their slots. */
#define HG_PHI64 0x9e3779b97f4a7c15ull
__attribute__((target("general-regs-only"), always_inline)) static inline uint64_t hg_hash(uint64_t key, unsigned bits)
{
	return bits ? key * HG_PHI64 >> (64 - bits) : 0; /* general registers only: inlined into the entry points too */
}
#define HG_CELL_TID_MASK ((1ull << (SH_STATE_SHIFT - SH_TID_SHIFT)) - 1) /* a cell's tid field, shifted down */

/* fastpath.c */
extern int hg_detect; /* detection active in this process (off in forked children) */
/* The Go side's copy of its locksets (shadow.Locksets.SetMirror), by id,
 * SH_LOCKSET_MIRROR_WORDS words each: the number of locks (0: not
 * copied), then the locks; zeroed memory, touched as ids are made. Off
 * in a forked child, whose detector's ids are its own (fastpath.c). */
#define HG_LSM_IDS (1u << 18)
extern uint64_t hg_lsm[(uint64_t)HG_LSM_IDS * SH_LOCKSET_MIRROR_WORDS];
extern int hg_lsm_off;
uint64_t hg_range_settled(struct hg_thread *t, uint64_t addr, uint64_t len, uint64_t info); /* bytes the fast path settled */
uint64_t hg_release_settled(struct hg_thread *t, uint64_t addr, uint64_t len, uint64_t pc); /* the same for a free's check */
/* hg_record notes an access of a lock-protected region (hg_thread.rec_r/rec_w) */
__attribute__((no_caller_saved_registers, target("general-regs-only"))) void hg_record(struct hg_thread *t, uint64_t addr,
												   uint32_t flags);
__attribute__((target("general-regs-only"))) void hg_record_reads_reset(struct hg_thread *t); /* the region's record of reads starts empty */

/* lockview.c */
void hg_lockview_lock(struct hg_thread *t, uint64_t m, int read); /* a lock event was buffered */
void hg_lockview_unlock(struct hg_thread *t, uint64_t m);         /* an unlock event was buffered */
void hg_set_tid(struct hg_thread *t, int32_t tid); /* threads.c: t->tid and t->row */
void hg_lockview_sync(struct hg_thread *t);                       /* after a flush: hg_tstate.locks is current */

/* lockorder.c */
int hg_lockorder_new(struct hg_thread *t, uint64_t m); /* t's lock of m makes a pair with a held mutex not seen before */
int hg_lockorder_any(void);                            /* a pair was seen */

/* threads.c */
struct hg_thread *hg_threads_head(void); /* every thread's record (exit statistics) */
struct hg_thread *hg_current(void);      /* the calling thread's record, made on first use */
struct hg_thread *hg_bufferable(void);   /* the thread's record if it may buffer events now, else NULL */
void hg_flush(struct hg_thread *t);      /* buffered events to the Go side (wrappers) */
void hg_flush_signals(struct hg_thread *t); /* hg_flush if signal handlers left something since the last one */
void hg_event(struct hg_thread *t, uint64_t addr, uint64_t info, uint64_t len, int may_flush);
void hg_retire(struct hg_thread *t); /* the thread has finished: no more events, its buffer is unmapped */
/* an access made inside one of the thread's signal handlers: kept for the next flush */
__attribute__((no_caller_saved_registers, target("general-regs-only"))) void hg_sig_access(struct hg_thread *t, uint64_t addr,
											uint64_t info, uint64_t len);
void hg_forked_record(struct hg_thread *t, int32_t tid); /* a forked child's thread starts over as tid */
#define HG_STACK_FRAMES 32 /* frames of a captured call stack (reports, thread creation) */
int hg_backtrace(uint64_t *ras); /* the caller's call stack (HG_STACK_FRAMES at most); a wrapper only */
void hg_vector_state(uint32_t header_flags);         /* start-up: the vector state the program can hold live (threads.c) */
void hg_records_init(void);                  /* start-up: records of finished threads are reused */
void hg_spin_init(void);                     /* start-up: hand-over waiters and lockers spin only with more than one CPU */
void hg_records_forked(void);                /* the fork handler: the free list's lock is free */
void hg_record_recyclable(struct hg_thread *t); /* t's thread was created by the program: its record goes back when it ends */

/* shadow.c */
extern uintptr_t *hg_shadow_dir;
extern uintptr_t hg_split_base; /* 0 when the fast path cannot read side cells (a forked child's detector keeps them) */
extern int hg_shadow_shared; /* the cells are shared with a detector process: release with MADV_REMOVE */
void hg_reset_cells(uint64_t addr, uint64_t size);      /* zero a mapping's cells, without Go (shadow.c) */
void hg_reset_heap_cells(uint64_t addr, uint64_t size); /* zero a heap block's cells, without Go (shadow.c) */

/* loops.c */
void hg_spin_note(uint64_t addr); /* addr is a spin variable */
/* is a write to [addr, addr+size) a counterpart write? (called on the fast path: saves what it uses) */
__attribute__((no_caller_saved_registers, target("general-regs-only"))) int hg_spin_is(uint64_t addr, uint64_t size);
void hg_spin_forget(uint64_t addr, uint64_t size); /* a heap block is released */
extern int hg_spin_used;
void hg_cvm_note(uint64_t m); /* m is a mutex used with a condition variable */
int hg_cvm_is(uint64_t m);
void hg_snap_push_go(struct hg_thread *t, uint64_t from, const uint64_t *c, uint64_t n);
void hg_cvm_wait(uint64_t c, uint64_t m);        /* a wait on condition variable c with mutex m begins (hg_cvm_note too) */
int hg_cvm_waited_with(uint64_t c, uint64_t m); /* c's last wait named m, or none was made (hg_signal) */
uint64_t hg_safe_load(uint64_t addr); /* 8 bytes at addr, 0 if unreadable */

/* annotations.c: dynamic annotations and Valgrind client requests */
/* hg_ignored: a plain access with these flags is inside the thread's
 * ignore sections (every kind it makes is ignored) */
__attribute__((target("general-regs-only"), always_inline)) static inline int hg_ignored(const struct hg_thread *t,
											 uint32_t flags)
{
	return __builtin_expect(t->ignore != 0, 0) && (flags & (HG_READ | HG_WRITE) & ~(uint32_t)t->ignore) == 0;
}

/* ranges.c */
uint64_t hg_link_pc(void *ra); /* the main program's link-time address of ra; 0 unless ra is in it */
uint64_t hg_call_pc(void *ra); /* hg_link_pc(ra) - 1: inside the call that returns to ra, for reports; 0 unless in the main program */
void hg_main_span(uint64_t *lo, uint64_t *hi); /* the main program's code */
void hg_runtime_span(uint64_t *lo, uint64_t *hi); /* this library */

/* remote.c: the detector's entry points for the C side. Each goes to the
 * Go side in this process (the hgGo function of the same name), or, in a
 * forked child, to the child's detector process. */
int hg_d_flush(int32_t tid, struct hg_event *ev, uint32_t n, struct hg_thread *t);
void hg_d_stack(int32_t tid, uint64_t *frames, int n); /* n (return address, stack pointer) pairs */
int32_t hg_d_thread_create(int32_t parent, uint64_t *stack, int n); /* the creator's stack, innermost first */
void hg_d_thread_name(int32_t tid, uint64_t handle, const char *name); /* tid < 0: the thread whose pthread_t is handle */
void hg_d_thread_handle(int32_t tid, uint64_t handle);
void hg_d_thread_exit(int32_t tid);
void hg_d_thread_join(int32_t tid, uint64_t handle);
void hg_d_thread_detach(int32_t tid, uint64_t handle);
void hg_d_barrier_init(uint64_t addr, uint64_t count);
uint64_t hg_d_barrier_arrive(int32_t tid, uint64_t addr);
void hg_d_barrier_leave(int32_t tid, uint64_t addr, uint64_t gen);
void hg_d_release(int32_t tid, uint64_t addr);
void hg_d_acquire(int32_t tid, uint64_t addr);
int hg_d_finish(void);
int hg_d_free(int32_t tid, uint64_t addr, uint64_t size, uint64_t pc);
void hg_d_benign(uint64_t addr, uint64_t size, int on);
/* a forked child: start its detector process; the caller becomes its
 * thread 0. Returns the thread id, or -1 (why is in reason). */
int32_t hg_remote_start(uint64_t bias, const char **reason);
void hg_remote_forked(void); /* the fork handler: a child of a child starts over */
void hg_remote_save_options(void); /* start-up: HG_OPTIONS as the program started with them */
void hg_serve(const char *spec) __attribute__((noreturn)); /* this process is a detector process */
#endif
