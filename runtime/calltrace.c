/* calltrace.c: the threads' call traces (abi, "The call trace").
 *
 * Every function of the rewritten program appends an entry to its
 * thread's trace when it is entered (patch/trace.go): the glue reads the
 * trace pointer hg_trace_cur through %fs at the thread-pointer offset this
 * file stores in the header's trace slot. The trace is a ring of
 * HG_TRACE_BYTES whose 16-bit position wraps by itself. Each thread id
 * has one ring: a thread traces into it from its start (hg_trace_own) to
 * its end, and the ring stays when the thread ends (races are often
 * reported against a thread that has exited) until the id goes to a new
 * thread, which marks the old entries as over. A thread without an id
 * (the runtime's thread start before it knows the id, a finished thread's
 * destructors) writes into a dummy ring nobody reads.
 *
 * Marks go between the entries: where the ring passed to a new thread
 * (here), and where the thread's published epoch changed (here for its
 * first, by the Go side as it publishes the others: runtime/epochs.go),
 * so that a report can find the entries of the segment an earlier access
 * was made in. Reports copy a thread's ring (hg_trace_copy) and replay it
 * (runtime/detect, calltrace.go). Writers are the thread itself and its
 * signal handlers; a reader takes what it finds: an entry torn by a
 * concurrent write, or overwritten by a handler, only makes a restored
 * stack fail. */
#define _GNU_SOURCE
#include "rt_internal.h"

#include <stdatomic.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>

static struct hg_trace hg_trace_dummy;
__thread struct hg_trace *hg_trace_cur __attribute__((tls_model("initial-exec"))) = &hg_trace_dummy;

/* The rings, by thread id, mapped HG_TRACE_CHUNK ids at a time as ids are
 * first used (only the pages a thread writes become memory). */
struct hg_trace *_Atomic hg_trace_chunks[HG_MAX_THREADS / HG_TRACE_CHUNK];

/* hg_trace_init stores the trace pointer's thread-pointer offset in the
 * header's slot: from then on the program's function entries are traced. */
void hg_trace_init(struct hg_header *h)
{
	char *tp;
	__asm__("mov %%fs:0, %0" : "=r"(tp));
	h->slot_trace = (int64_t)((char *)&hg_trace_cur - tp);
}

/* hg_trace_of is thread id tid's ring, mapped first if make is set; NULL
 * when there is none. */
static struct hg_trace *hg_trace_of(int32_t tid, int make)
{
	if (tid < 0 || tid >= HG_MAX_THREADS)
		return NULL;
	struct hg_trace *_Atomic *slot = &hg_trace_chunks[tid / HG_TRACE_CHUNK];
	struct hg_trace *c = atomic_load_explicit(slot, memory_order_acquire);
	if (!c && make) {
		void *m = mmap(NULL, HG_TRACE_CHUNK * sizeof(struct hg_trace), PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (m == MAP_FAILED)
			return NULL;
		if (atomic_compare_exchange_strong_explicit(slot, &c, m, memory_order_acq_rel, memory_order_acquire))
			c = m;
		else
			munmap(m, HG_TRACE_CHUNK * sizeof(struct hg_trace)); /* another thread mapped it */
	}
	return c ? c + tid % HG_TRACE_CHUNK : NULL;
}

static void hg_trace_put(struct hg_trace *tr, uint64_t w0, uint64_t w1)
{
	uint16_t pos = tr->pos;
	tr->pos = (uint16_t)(pos + HG_TRACE_ENTRY);
	tr->w[pos / 8] = w0;
	tr->w[pos / 8 + 1] = w1;
}

/* hg_trace_own: the calling thread is thread tid now, and traces into the
 * id's ring: what an earlier thread of that id left there is marked as
 * over, and the epoch its creator published for it begins. */
void hg_trace_own(int32_t tid)
{
	struct hg_trace *tr = hg_trace_of(tid, 1);
	if (!tr)
		return;
	hg_trace_put(tr, HG_TRACE_MARK_RESET << 32, 0);
	hg_trace_put(tr, HG_TRACE_MARK_EPOCH << 32, __atomic_load_n(&hg_tstate[tid].epoch, __ATOMIC_RELAXED));
	hg_trace_cur = tr;
}

/* general registers only: the fast path calls it from instrumented code
 * (regionpub.c, hg_begin_segment), where the program's vector registers
 * are live. */
__attribute__((target("general-regs-only"))) void hg_trace_mark_epoch(uint64_t e)
{
	hg_trace_put(hg_trace_cur, HG_TRACE_MARK_EPOCH << 32, e);
}

/* hg_trace_detach: the calling thread has finished with its id. */
void hg_trace_detach(void) { hg_trace_cur = &hg_trace_dummy; }

/* hg_trace_copy copies thread tid's ring into out (HG_TRACE_BYTES / 8
 * words), oldest entry first, and returns the number of words, 0 when tid
 * has no ring. */
int hg_trace_copy(int32_t tid, uint64_t *out)
{
	struct hg_trace *tr = hg_trace_of(tid, 0);
	if (!tr)
		return 0;
	size_t head = __atomic_load_n(&tr->pos, __ATOMIC_RELAXED), n = sizeof tr->w;
	memcpy(out, (char *)tr->w + head, n - head);
	memcpy((char *)out + (n - head), tr->w, head);
	return (int)(n / 8);
}
