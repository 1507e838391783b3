/* hgrt.h: the contract between rewritten executables and the runtime, and
 * the runtime's C-side declarations.
 *
 * elfrw/write.go lays out the header below at the start of the data segment
 * that hgrewrite adds to every rewritten executable; the runtime finds it by
 * its magic and fills the two entry slots. Trampolines call through the slots
 * with rdi = address, rsi = info word (see patch.Info), rdx = element count
 * (range entry only). Keep in sync with elfrw/write.go and patch/patch.go.
 */
#ifndef HGRT_H
#define HGRT_H
#include <stdint.h>

#define HG_MAGIC "HGRWDAT1"
#define HG_VERSION 1
#define HG_FLAG_PIE 1

struct hg_header {
	char magic[8];
	uint32_t version;
	uint32_t flags;
	uint64_t text_addr; /* link-time address of the trampoline segment */
	uint64_t text_size;
	uint64_t slot_access; /* void (*)(uint64_t addr, uint64_t info) */
	uint64_t slot_range;  /* void (*)(uint64_t addr, uint64_t info, uint64_t count) */
	uint64_t reserved[2];
};

/* The info word. */
#define HG_INFO_PC(i) ((uint32_t)(i))
#define HG_INFO_SIZE(i) ((uint32_t)(((i) >> 32) & 0xffff))
#define HG_INFO_FLAGS(i) ((uint32_t)(((i) >> 48) & 0xffff))
#define HG_READ 1
#define HG_WRITE 2
#define HG_ATOMIC 4
#define HG_POST 8 /* second call of an atomic access, after the instruction */
#define HG_ALLOC 16 /* heap block allocated: addr, len = size */
#define HG_FREE 32  /* heap block released: addr, len = usable size */
#define HG_LOCK 64    /* lock acquired: addr, len = 1 for read mode */
#define HG_UNLOCK 128 /* lock released: addr */
#define HG_RESET_DONE 256 /* with HG_ALLOC: the C side reset the shadow already */
#define HG_SPIN 512   /* with HG_ATOMIC: a spinning-read-loop load (acquire after) or its counterpart write (release before) */
#define HG_HOOK 1024  /* not an access: a loop hook, kind in the size field (patch/hooks.go) */
#define HG_ORDERED 2048 /* with HG_SPIN|HG_ATOMIC: an atomic accessor's plain move; not a spin variable */
#define HG_SPIN_STATIC 4096 /* with HG_SPIN: a spin variable at a fixed address, its stores marked statically */
#define HG_SIGNAL 8192    /* not an access: pthread_cond_signal/broadcast on addr */
#define HG_WAITDONE 16384 /* not an access: a condition wait on addr returned; len: HG_WAIT_* */
#define HG_WAIT_IN_LOOP 1 /* the wait was marked as inside a wait loop */
#define HG_WAIT_WOKE 2    /* it returned 0 (not a timeout) */
#define HG_HOOK_WAIT 1    /* the next condition wait belongs to a wait loop */
#define HG_HOOK_EXIT 2    /* a wait loop is left; addr: its condition variable, or 0 */
#define HG_HOOK_LOCK 3    /* addr: a mutex locked in a function that signals (a mutex used with condition variables) */
#define HG_HOOK_DEREF 0x100 /* with HG_HOOK_EXIT: addr holds the condition variable's address */
/* Lock events: len bits. */
#define HG_LOCK_READ 1 /* read mode (rwlock) */
#define HG_LOCK_WAIT 2 /* the mutex released and re-acquired inside a condition wait */
#define HG_LOCK_CVM 4  /* with HG_UNLOCK: the mutex is used with condition variables */
#define HG_LOCK_BEGIN 8 /* with HG_LOCK: the outermost lock, a lock-protected region begins (lsd) */
#define HG_LOCK_END 16  /* with HG_UNLOCK: the region's own mutex is released, the region ends */

/* One buffered access, handed to the Go side in batches. len is the byte
 * length for string-instruction ranges and 0 for single accesses (whose
 * size is in the info word). */
struct hg_event {
	uint64_t addr;
	uint64_t info;
	uint64_t len;
};

#define HG_EVENTS 1024
#define HG_REC 32 /* addresses recorded per lock-protected region, each of reads and writes */

/* Per-thread record. The counters live in an arena and are never freed, so
 * totals survive thread exit; the event buffer is mapped per thread. */
struct hg_thread {
	uint64_t accesses; /* single accesses */
	uint64_t ranges;   /* string-instruction ranges */
	uint64_t bytes;    /* bytes covered by ranges */
	struct hg_thread *next;
	int32_t tid;        /* the detector's thread id, -1 until known */
	int32_t in_rt;      /* inside the runtime: accesses from signal handlers are dropped */
	uint32_t n;         /* buffered events */
	uint8_t wait_mark;  /* a wait-loop hook marked the next condition wait */
	uint8_t recording;  /* inside a lock-protected region (lsd): accesses are recorded (hg_record) */
	uint8_t waited;     /* a condition wait or wait-loop exit in this region: flush at its unlock */
	uint8_t wrote;      /* the region wrote memory: flush at its unlock (write/read relations) */
	struct hg_event *buf;
	void *xsave;        /* 64-byte aligned area for the vector state around Go calls */
	uint64_t last_atomic; /* address of the atomic access in progress */
	uint64_t region_mutex; /* the mutex whose lock began the current region */
	uint8_t want_stack;    /* reports wait for the call stack at the next wrapper (fastpath.c) */
	/* The current lock-protected region's reads and writes (lsd, the
	 * write/read relation of runtime/cond.go), recorded here so that its
	 * accesses can still take the fast path; writes stop at a signal. */
	uint8_t nrec_r, nrec_w, rec_writes_on;
	uint64_t rec_r[HG_REC];
	uint64_t rec_w[HG_REC];
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
	char log_path[4096];
};

extern struct hg_options hg_opts;

/* The fast path's view of the detector (fastpath.c, epochs.go): each
 * thread's current epoch (tid << 44 | clock), and the shadow memory's
 * directory (see package shadow: 4-byte granules, 24-byte cells, 4 MiB
 * chunks). */
#define HG_MAX_THREADS 65536
extern uint64_t hg_epochs[HG_MAX_THREADS];
extern uintptr_t *hg_shadow_dir;
void hg_set_shadow_dir(uintptr_t dir);
extern int hg_detect; /* detection active in this process (off in forked children) */

struct hg_thread *hg_threads_head(void);
struct hg_thread *hg_current(void);
struct hg_thread *hg_bufferable(void); /* the thread's record if it may buffer events now, else NULL */
void hg_flush(struct hg_thread *t);
void hg_event(struct hg_thread *t, uint64_t addr, uint64_t info, uint64_t len, int may_flush);
void hg_reset_cells(uint64_t addr, uint64_t size);
void hg_spin_note(uint64_t addr);              /* loops.c: addr is a spin variable */
__attribute__((no_caller_saved_registers, target("general-regs-only"))) void hg_record(struct hg_thread *t, uint64_t addr,
												   uint32_t flags); /* fastpath.c */
/* is a write to [addr, addr+size) a counterpart write? (called on the fast path: saves what it uses) */
__attribute__((no_caller_saved_registers, target("general-regs-only"))) int hg_spin_is(uint64_t addr, uint64_t size);
void hg_spin_forget(uint64_t addr, uint64_t size); /* a heap block is released */
extern int hg_spin_used;
void hg_cvm_note(uint64_t m); /* loops.c: m is a mutex used with a condition variable */
int hg_cvm_is(uint64_t m);
uint64_t hg_safe_load(uint64_t addr);          /* 8 bytes at addr, 0 if unreadable */
uint64_t hg_link_pc(void *ra); /* 0 unless ra is in the main program */
uint64_t hg_link_pc_addr(uint64_t ra); /* the same for an address held as an integer (Go) */
int hg_in_runtime(uint64_t addr); /* addr is code of this library */
void hg_print(const char *line);
void hg_halt(int code); /* flush stdio and exit now (halt_on_error) */
char *hg_demangle(const char *name); /* malloc'd, or NULL (demangle.c) */
#endif
