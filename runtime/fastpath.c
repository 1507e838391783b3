/* fastpath.c: the entry points trampolines call, and the runtime's start-up.
 *
 * The entry points run on every instrumented memory access, so they stay in
 * C and never call into Go (a C-to-Go call costs ~100 ns; see
 * ARCHITECTURE.md). They are compiled for general registers only and with
 * no_caller_saved_registers: they preserve every register they touch, so
 * trampolines save only flags and the argument registers. Anything they
 * call must not touch SSE/AVX state either.
 */
#define _GNU_SOURCE
#include "hgrt.h"

#include <fcntl.h>
#include <link.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "_cgo_export.h"

#define HG_FAST __attribute__((no_caller_saved_registers, target("general-regs-only"), used))

struct hg_options hg_opts;

static __thread struct hg_thread *hg_self __attribute__((tls_model("initial-exec")));
static struct hg_thread *_Atomic hg_list;

/* Thread records come from one reservation, bump-allocated without locks,
 * so registering is async-signal-safe. */
#define HG_ARENA_BYTES (64u << 20)
static char *hg_arena;
static _Atomic size_t hg_arena_used;
static struct hg_thread hg_overflow; /* shared, updated atomically, once the arena is full */

/* hg_register is the slow path of the entry points. It preserves every
 * register itself (no_caller_saved_registers), so that calling it does not
 * make the entry points save all registers on every access. */
__attribute__((no_caller_saved_registers, target("general-regs-only"), noinline)) static struct hg_thread *
hg_register(void)
{
	size_t off = atomic_fetch_add_explicit(&hg_arena_used, sizeof(struct hg_thread), memory_order_relaxed);
	if (hg_arena == NULL || off + sizeof(struct hg_thread) > HG_ARENA_BYTES)
		return &hg_overflow;
	struct hg_thread *t = (struct hg_thread *)(hg_arena + off);
	t->next = atomic_load_explicit(&hg_list, memory_order_relaxed);
	while (!atomic_compare_exchange_weak_explicit(&hg_list, &t->next, t, memory_order_release,
						      memory_order_relaxed))
		;
	hg_self = t;
	return t;
}

__attribute__((target("general-regs-only"))) static inline void hg_add(uint64_t *p, uint64_t n, struct hg_thread *t)
{
	if (__builtin_expect(t == &hg_overflow, 0))
		__atomic_fetch_add(p, n, __ATOMIC_RELAXED);
	else
		*p += n; /* only this thread writes its record */
}

HG_FAST void hg_access(uint64_t addr, uint64_t info)
{
	(void)addr;
	(void)info;
	struct hg_thread *t = hg_self;
	if (__builtin_expect(t == NULL, 0))
		t = hg_register();
	hg_add(&t->accesses, 1, t);
}

HG_FAST void hg_range(uint64_t addr, uint64_t info, uint64_t count)
{
	(void)addr;
	struct hg_thread *t = hg_self;
	if (__builtin_expect(t == NULL, 0))
		t = hg_register();
	hg_add(&t->ranges, 1, t);
	hg_add(&t->bytes, count * HG_INFO_SIZE(info), t);
}

struct hg_thread *hg_threads_head(void)
{
	return atomic_load_explicit(&hg_list, memory_order_acquire);
}

/* hg_find_header locates the header hgrewrite put into the main program. */
static int hg_find_phdr(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct hg_header **out = data;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		if (p->p_type != PT_LOAD || !(p->p_flags & PF_W) || p->p_memsz < sizeof(struct hg_header))
			continue;
		struct hg_header *h = (struct hg_header *)(info->dlpi_addr + p->p_vaddr);
		if (memcmp(h->magic, HG_MAGIC, 8) == 0) {
			*out = h;
			break;
		}
	}
	return 1; /* the first object is the main program: stop there */
}

static void hg_fatal(const char *msg)
{
	dprintf(hg_opts.err_fd, "hgrewrite runtime: %s\n", msg);
	_exit(2);
}

/* hg_init runs as a constructor, after the Go runtime's own initialiser in
 * .init_array (TestRuntimeInitOrder checks the order): hgGoInit waits for
 * the Go runtime to be ready, which would never happen if it ran first. */
__attribute__((constructor)) static void hg_init(void)
{
	void *a = mmap(NULL, HG_ARENA_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (a != MAP_FAILED)
		hg_arena = a;
	hg_opts.err_fd = fcntl(2, F_DUPFD_CLOEXEC, 100);
	if (hg_opts.err_fd < 0)
		hg_opts.err_fd = 2;
	if (hgGoInit(&hg_opts) != 0)
		_exit(2); /* the Go side printed why */
	struct hg_header *h = NULL;
	dl_iterate_phdr(hg_find_phdr, &h);
	if (h == NULL)
		return; /* loaded by a program hgrewrite did not rewrite: nothing to do */
	if (h->version != HG_VERSION)
		hg_fatal("this executable was rewritten by a different hgrewrite version; rewrite it again");
	h->slot_access = (uint64_t)(uintptr_t)&hg_access;
	h->slot_range = (uint64_t)(uintptr_t)&hg_range;
}

/* hg_print writes one line to the runtime's stderr, or to log_path.<pid>.
 * It is plain C on purpose: it also runs in forked children, where calling
 * into Go can deadlock on a lock a vanished Go thread held at fork time. */
static void hg_print(const char *line)
{
	int fd = hg_opts.err_fd, opened = 0;
	if (hg_opts.log_path[0]) {
		char path[sizeof hg_opts.log_path + 32];
		snprintf(path, sizeof path, "%s.%d", hg_opts.log_path, (int)getpid());
		int f = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (f >= 0)
			fd = f, opened = 1;
	}
	size_t n = strlen(line);
	while (n > 0) {
		ssize_t w = write(fd, line, n);
		if (w <= 0)
			break;
		line += w;
		n -= (size_t)w;
	}
	if (opened)
		close(fd);
}

__attribute__((destructor)) static void hg_fini(void)
{
	if (!hg_opts.stats)
		return;
	uint64_t acc = 0, ranges = 0, bytes = 0, threads = 0;
	for (struct hg_thread *t = hg_threads_head(); t; t = t->next) {
		acc += t->accesses;
		ranges += t->ranges;
		bytes += t->bytes;
		threads++;
	}
	acc += __atomic_load_n(&hg_overflow.accesses, __ATOMIC_RELAXED);
	ranges += __atomic_load_n(&hg_overflow.ranges, __ATOMIC_RELAXED);
	bytes += __atomic_load_n(&hg_overflow.bytes, __ATOMIC_RELAXED);
	char line[256];
	snprintf(line, sizeof line,
		 "hgrewrite: pid %d: %llu memory accesses checked, %llu string ranges (%llu bytes), %llu threads\n",
		 (int)getpid(), (unsigned long long)acc, (unsigned long long)ranges, (unsigned long long)bytes,
		 (unsigned long long)threads);
	hg_print(line);
}
