/* remote.c: the detector's entry points for the C side, and race detection
 * in forked children.
 *
 * The Go runtime does not survive fork: a child has none of its threads,
 * and a call into Go there waits forever for them. So a forked child's
 * detector runs in a process of its own, started when the child creates
 * its first thread (a child with one thread has nothing to race with, and
 * a child that only execs never pays for it). That process is the program
 * file itself, executed again with HG_SERVE set: its runtime library
 * serves instead of running the program (hg_serve, runtime/serve.go).
 *
 * What the two processes share: a memfd with the threads' published epochs
 * and locksets (hg_tstate, mapped over the child's own array
 * and the detector's) and the shadow arena (directory and chunks), mapped
 * at the same address in both, so that the directory's chunk pointers mean
 * the same in each. The child's fast path works on the cells directly, as
 * in the parent; what it hands to the Go side (hg_d_*) goes over a socket
 * pair instead, one packet per call, answered before the call returns.
 *
 * The detector process is not the child's child (hg_spawn), so the
 * program's wait() and SIGCHLD handlers never see it; it holds no
 * descriptor of the program's, and it ends when the child's end of the
 * socket closes.
 */
#define _GNU_SOURCE
#include "rt_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <signal.h>
#include <unistd.h>

#include "_cgo_export.h"

static int hg_remote;          /* the detector is a process of its own */
static int hg_remote_dead;     /* ... and it has ended: calls are dropped, never made to Go */
static int hg_sock = -1;       /* this process's end of the socket pair */
static uint32_t hg_rpc_mutex;  /* one call at a time on the socket */
static void *hg_remote_arena;  /* the shared shadow arena */
static size_t hg_remote_arena_size;
static char *hg_saved_options; /* "HG_OPTIONS=..." as the program started */

/* ---- the socket, one call at a time ---- */

/* A futex lock, not pthread_mutex_lock: the program's own locks are
 * interposed, and a thread calling the detector may be inside a wrapper. */
static void hg_rpc_lock(void)
{
	uint32_t c = 0;
	if (__atomic_compare_exchange_n(&hg_rpc_mutex, &c, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return;
	if (c != 2)
		c = __atomic_exchange_n(&hg_rpc_mutex, 2, __ATOMIC_ACQUIRE);
	while (c != 0) {
		syscall(SYS_futex, &hg_rpc_mutex, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
		c = __atomic_exchange_n(&hg_rpc_mutex, 2, __ATOMIC_ACQUIRE);
	}
}

static void hg_rpc_unlock(void)
{
	if (__atomic_exchange_n(&hg_rpc_mutex, 0, __ATOMIC_RELEASE) == 2)
		syscall(SYS_futex, &hg_rpc_mutex, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* hg_remote_lost: the detector process is gone (it crashed, or could not
 * start): detection ends in this process, which says so once. */
static void hg_remote_lost(void)
{
	if (__atomic_exchange_n(&hg_remote_dead, 1, __ATOMIC_ACQ_REL))
		return;
	hg_detect = 0;
	char line[160];
	snprintf(line, sizeof line, "hgrewrite: pid %d: the detector process ended: race detection is off from here on\n",
		 (int)getpid());
	hg_print(line);
}

/* hg_rpc sends one request with up to two payloads and waits for the
 * reply. Raw system calls: the socket functions are interposed
 * (fdsync.c), and those are cancellation points, where a cancelled
 * thread would leave the socket locked. */
static int64_t hg_rpc(uint32_t op, int32_t tid, uint64_t a0, uint64_t a1, uint64_t a2, const void *p1, uint32_t n1,
		      const void *p2, uint32_t n2)
{
	if (__atomic_load_n(&hg_remote_dead, __ATOMIC_ACQUIRE))
		return op == HG_OP_HELLO || op == HG_OP_THREAD_CREATE ? -1 : 0;
	int saved = errno;
	struct hg_req q = {.op = op, .tid = tid, .a = {a0, a1, a2}, .n1 = n1, .n2 = n2};
	struct iovec iov[3] = {{&q, sizeof q}, {(void *)p1, n1}, {(void *)p2, n2}};
	struct msghdr m = {.msg_iov = iov, .msg_iovlen = 3};
	struct hg_rep r = {0};
	long sent = -1, got = -1;
	hg_rpc_lock();
	if (hg_sock >= 0) {
		do
			sent = syscall(SYS_sendmsg, hg_sock, &m, MSG_NOSIGNAL);
		while (sent < 0 && errno == EINTR);
		if (sent >= 0) {
			do
				got = syscall(SYS_recvfrom, hg_sock, &r, sizeof r, 0, NULL, NULL);
			while (got < 0 && errno == EINTR);
		}
	}
	hg_rpc_unlock();
	errno = saved;
	if (got != (long)sizeof r) {
		if (op == HG_OP_HELLO)
			return -1; /* the caller says why */
		hg_remote_lost();
		return op == HG_OP_THREAD_CREATE ? -1 : 0;
	}
	if (r.halt) {
		/* halt_on_error: the detector has printed the report and ended */
		hg_detect = 0;
		__atomic_store_n(&hg_remote_dead, 1, __ATOMIC_RELEASE);
		hg_halt(r.code);
	}
	return r.ret;
}

/* ---- the detector's entry points ---- */

int hg_d_flush(int32_t tid, struct hg_event *ev, uint32_t n, struct hg_thread *t)
{
	if (!hg_remote)
		return hgGoFlush(tid, ev, n, t);
	struct hg_rec_msg rec = {.nrec_r = t->nrec_r, .nrec_w = t->nrec_w, .rec_r_all = t->rec_r_all};
	memcpy(rec.rec_r, t->rec_r, t->nrec_r * sizeof rec.rec_r[0]);
	memcpy(rec.rec_w, t->rec_w, t->nrec_w * sizeof rec.rec_w[0]);
	return (int)hg_rpc(HG_OP_FLUSH, tid, 0, 0, 0, ev, n * sizeof *ev, &rec, sizeof rec);
}

void hg_d_stack(int32_t tid, uint64_t *pcs, int n)
{
	if (!hg_remote)
		hgGoStack(tid, pcs, n);
	else
		hg_rpc(HG_OP_STACK, tid, 0, 0, 0, pcs, 2 * (uint32_t)n * sizeof *pcs, NULL, 0);
}

int32_t hg_d_thread_create(int32_t parent, uint64_t *stack, int n)
{
	if (!hg_remote)
		return hgGoThreadCreate(parent, stack, n);
	return (int32_t)hg_rpc(HG_OP_THREAD_CREATE, parent, 0, 0, 0, stack, (uint32_t)n * sizeof *stack, NULL, 0);
}

void hg_d_thread_name(int32_t tid, uint64_t handle, const char *name)
{
	if (!hg_remote)
		hgGoThreadName(tid, handle, (char *)name);
	else
		hg_rpc(HG_OP_THREAD_NAME, tid, handle, 0, 0, name, (uint32_t)strlen(name), NULL, 0);
}

void hg_d_thread_handle(int32_t tid, uint64_t handle)
{
	if (!hg_remote)
		hgGoThreadHandle(tid, handle);
	else
		hg_rpc(HG_OP_THREAD_HANDLE, tid, handle, 0, 0, NULL, 0, NULL, 0);
}

void hg_d_thread_exit(int32_t tid)
{
	if (!hg_remote)
		hgGoThreadExit(tid);
	else
		hg_rpc(HG_OP_THREAD_EXIT, tid, 0, 0, 0, NULL, 0, NULL, 0);
}

void hg_d_thread_join(int32_t tid, uint64_t handle)
{
	if (!hg_remote)
		hgGoThreadJoin(tid, handle);
	else
		hg_rpc(HG_OP_THREAD_JOIN, tid, handle, 0, 0, NULL, 0, NULL, 0);
}

void hg_d_thread_detach(int32_t tid, uint64_t handle)
{
	if (!hg_remote)
		hgGoThreadDetach(tid, handle);
	else
		hg_rpc(HG_OP_THREAD_DETACH, tid, handle, 0, 0, NULL, 0, NULL, 0);
}

void hg_d_barrier_init(uint64_t addr, uint64_t count)
{
	if (!hg_remote)
		hgGoBarrierInit(addr, count);
	else
		hg_rpc(HG_OP_BARRIER_INIT, -1, addr, count, 0, NULL, 0, NULL, 0);
}

uint64_t hg_d_barrier_arrive(int32_t tid, uint64_t addr)
{
	if (!hg_remote)
		return hgGoBarrierArrive(tid, addr);
	return (uint64_t)hg_rpc(HG_OP_BARRIER_ARRIVE, tid, addr, 0, 0, NULL, 0, NULL, 0);
}

void hg_d_barrier_leave(int32_t tid, uint64_t addr, uint64_t gen)
{
	if (!hg_remote)
		hgGoBarrierLeave(tid, addr, gen);
	else
		hg_rpc(HG_OP_BARRIER_LEAVE, tid, addr, gen, 0, NULL, 0, NULL, 0);
}

void hg_d_release(int32_t tid, uint64_t addr)
{
	if (!hg_remote)
		hgGoRelease(tid, addr);
	else
		hg_rpc(HG_OP_RELEASE, tid, addr, 0, 0, NULL, 0, NULL, 0);
}

void hg_d_acquire(int32_t tid, uint64_t addr)
{
	if (!hg_remote)
		hgGoAcquire(tid, addr);
	else
		hg_rpc(HG_OP_ACQUIRE, tid, addr, 0, 0, NULL, 0, NULL, 0);
}

int hg_d_finish(void)
{
	if (!hg_remote)
		return hgGoFinish();
	return (int)hg_rpc(HG_OP_FINISH, -1, 0, 0, 0, NULL, 0, NULL, 0);
}

void hg_d_benign(uint64_t addr, uint64_t size, int on)
{
	if (!hg_remote)
		hgGoBenign(addr, size, on);
	else
		hg_rpc(HG_OP_BENIGN, -1, addr, size, (uint64_t)on, NULL, 0, NULL, 0);
}

int hg_d_free(int32_t tid, uint64_t addr, uint64_t size, uint64_t pc)
{
	if (!hg_remote)
		return hgGoFree(tid, addr, size, pc);
	return (int)hg_rpc(HG_OP_FREE, tid, addr, size, pc, NULL, 0, NULL, 0);
}

/* ---- starting the detector process (the child's side) ---- */

void hg_remote_save_options(void)
{
	const char *o = getenv("HG_OPTIONS");
	if (!o)
		return;
	size_t n = strlen(o);
	hg_saved_options = malloc(n + sizeof "HG_OPTIONS=");
	if (hg_saved_options)
		snprintf(hg_saved_options, n + sizeof "HG_OPTIONS=", "HG_OPTIONS=%s", o);
}

/* Where the shared arena goes: address space that a fresh process leaves
 * empty (programs sit at 0x55..., libraries and stacks at 0x7f..., the
 * Go heap at 0xc0...), tried in order in the child; the detector process
 * maps it at the same address. Sizes are tried from the largest (a chunk
 * of cells per 4 MiB of the child's memory) down, for limits on address
 * space. */
static const uint64_t hg_arena_hints[] = {0x300000000000ull, 0x380000000000ull, 0x200000000000ull,
					  0x400000000000ull};
static const uint64_t hg_arena_sizes[] = {256ull << 30, 64ull << 30, 16ull << 30};

static void *hg_map_arena(int memfd, size_t *size)
{
	for (size_t s = 0; s < sizeof hg_arena_sizes / sizeof hg_arena_sizes[0]; s++) {
		if (ftruncate(memfd, (off_t)(HG_PUB_BYTES + hg_arena_sizes[s])) != 0)
			continue;
		for (size_t h = 0; h < sizeof hg_arena_hints / sizeof hg_arena_hints[0]; h++) {
			void *p = mmap((void *)(uintptr_t)hg_arena_hints[h], hg_arena_sizes[s], PROT_READ | PROT_WRITE,
				       MAP_SHARED | MAP_FIXED_NOREPLACE | MAP_NORESERVE, memfd, (off_t)HG_PUB_BYTES);
			if (p == (void *)(uintptr_t)hg_arena_hints[h]) {
				*size = hg_arena_sizes[s];
				return p;
			}
			if (p != MAP_FAILED)
				munmap(p, hg_arena_sizes[s]); /* a kernel without MAP_FIXED_NOREPLACE put it elsewhere */
		}
	}
	return NULL;
}

/* The detector process reserves the arena's addresses before the Go
 * runtime starts (a constructor that runs before the Go runtime's own, in
 * this library's init order): Go places its heap at a random address,
 * which can fall where the child's arena is (0x3027... was seen). Each
 * hint is reserved at the largest size, inaccessible, and replaced by
 * the arena's mapping in hg_serve_map. */
static uint64_t hg_reserved[sizeof hg_arena_hints / sizeof hg_arena_hints[0]];

__attribute__((constructor(101))) static void hg_serve_reserve(void)
{
	if (!getenv("HG_SERVE"))
		return;
	for (size_t h = 0; h < sizeof hg_arena_hints / sizeof hg_arena_hints[0]; h++) {
		void *want = (void *)(uintptr_t)hg_arena_hints[h];
		void *p = mmap(want, hg_arena_sizes[0], PROT_NONE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
		if (p == want)
			hg_reserved[h] = hg_arena_sizes[0];
		else if (p != MAP_FAILED)
			munmap(p, hg_arena_sizes[0]);
	}
}

/* hg_map_published maps the memfd's first HG_PUB_BYTES over hg_tstate (page
 * aligned). */
static int hg_map_published(int memfd)
{
	return mmap(hg_tstate, HG_PUB_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, memfd, 0) == (void *)hg_tstate;
}

/* hg_child_fds runs in the detector process before exec, with raw system
 * calls only: the three descriptors it keeps lose close-on-exec, every
 * other one is closed (a pipe the program's parent reads to its end must
 * not stay open here), and 0, 1 and 2 read and write /dev/null. */
static void hg_child_fds(int keep[3])
{
	for (int i = 0; i < 3; i++)
		syscall(SYS_fcntl, keep[i], F_SETFD, 0);
	for (int fd = 0; fd < 3; fd++) {
		if (fd == keep[0] || fd == keep[1] || fd == keep[2])
			continue;
		long null = syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDWR);
		if (null >= 0 && null != fd) {
			syscall(SYS_dup2, null, fd);
			syscall(SYS_close, null);
		}
	}
	int sorted[3] = {keep[0], keep[1], keep[2]};
	for (int i = 0; i < 3; i++)
		for (int j = i + 1; j < 3; j++)
			if (sorted[j] < sorted[i]) {
				int x = sorted[i];
				sorted[i] = sorted[j];
				sorted[j] = x;
			}
	unsigned lo = 3;
	for (int i = 0; i < 3; i++) {
		if (sorted[i] < (int)lo)
			continue;
		if (sorted[i] > (int)lo && syscall(SYS_close_range, lo, sorted[i] - 1, 0) != 0)
			for (unsigned fd = lo; fd < (unsigned)sorted[i]; fd++)
				syscall(SYS_close, fd);
		lo = sorted[i] + 1;
	}
	if (syscall(SYS_close_range, lo, ~0u, 0) != 0)
		for (unsigned fd = lo; fd < 65536; fd++)
			syscall(SYS_close, fd);
}

/* hg_spawn starts the detector process: the program file again, with
 * HG_SERVE naming the descriptors it serves on. 0 when it is on its way. */
static long hg_spawn(int sock, int memfd)
{
	extern char **environ;
	size_t n = 0;
	for (char **e = environ; e && *e; e++)
		n++;
	char **env = malloc((n + 3) * sizeof *env);
	if (!env)
		return -1;
	char serve[64];
	snprintf(serve, sizeof serve, "HG_SERVE=%d,%d,%d", sock, memfd, hg_opts.err_fd);
	size_t k = 0;
	for (char **e = environ; e && *e; e++)
		if (strncmp(*e, "HG_SERVE=", 9) != 0 && strncmp(*e, "HG_OPTIONS=", 11) != 0)
			env[k++] = *e;
	env[k++] = serve;
	if (hg_saved_options)
		env[k++] = hg_saved_options;
	env[k] = NULL;
	char *argv[] = {"hgrewrite-detector", NULL};
	int keep[3] = {sock, memfd, hg_opts.err_fd};
	/* Two fork-like clones: the first sends no signal when it ends, so
	 * the program's SIGCHLD handler never runs for it, and it is reaped
	 * here at once with __WALL, which wait() without it never sees; the
	 * second, the detector, is orphaned by that and belongs to init (an
	 * exec would make it a child that wait() sees). */
	long mid = syscall(SYS_clone, 0ul, NULL, NULL, NULL, 0ul);
	if (mid == 0) {
		long pid = syscall(SYS_clone, (unsigned long)SIGCHLD, NULL, NULL, NULL, 0ul);
		if (pid == 0) {
			hg_child_fds(keep);
			syscall(SYS_execve, "/proc/self/exe", argv, env);
		}
		syscall(SYS_exit_group, pid < 0 ? 1 : 0);
	}
	free(env);
	if (mid < 0)
		return -1;
	int status = 0;
	long r;
	do
		r = syscall(SYS_wait4, mid, &status, __WALL, NULL);
	while (r < 0 && errno == EINTR);
	return r == mid && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

int32_t hg_remote_start(uint64_t bias, const char **reason)
{
	*reason = "cannot create shared memory";
	int memfd = memfd_create("hgrewrite-shadow", MFD_CLOEXEC);
	if (memfd < 0)
		return -1;
	size_t size = 0;
	void *arena = hg_map_arena(memfd, &size);
	if (!arena || !hg_map_published(memfd)) {
		if (arena)
			munmap(arena, size);
		close(memfd);
		return -1;
	}
	int sv[2];
	*reason = "cannot start the detector process";
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
		munmap(arena, size);
		close(memfd);
		return -1;
	}
	long spawned = hg_spawn(sv[1], memfd);
	close(sv[1]);
	close(memfd);
	if (spawned < 0) {
		close(sv[0]);
		munmap(arena, size);
		return -1;
	}
	hg_sock = sv[0];
	hg_remote = 1;
	struct hg_hello h = {.pid = getpid(), .bias = bias, .arena = (uint64_t)(uintptr_t)arena, .arena_size = size};
	hg_main_span(&h.main_lo, &h.main_hi);
	hg_runtime_span(&h.lib_lo, &h.lib_hi);
	int32_t tid = (int32_t)hg_rpc(HG_OP_HELLO, -1, 0, 0, 0, &h, sizeof h, NULL, 0);
	if (tid < 0) {
		*reason = "the detector process did not start";
		hg_remote = 0;
		close(hg_sock);
		hg_sock = -1;
		munmap(arena, size);
		return -1;
	}
	hg_remote_arena = arena;
	hg_remote_arena_size = size;
	hg_shadow_shared = 1;
	hg_set_split_base(0); /* the detector process keeps its side cells */
	hg_set_shadow_dir((uintptr_t)arena);
	return tid;
}

/* hg_remote_forked: a child of a child starts over, with a detector of
 * its own if it starts threads; the parent's socket and arena are not its
 * own (its parent's detector must see the socket close when its parent
 * exits). */
__attribute__((target("general-regs-only"))) int hg_remote_on(void) { return hg_remote; } /* called from instrumented code too */

void hg_remote_forked(void)
{
	hg_rpc_mutex = 0;
	if (!hg_remote)
		return;
	hg_remote = 0;
	hg_remote_dead = 0;
	hg_set_split_base(0);
	hg_set_shadow_dir(0);
	if (hg_sock >= 0)
		close(hg_sock);
	hg_sock = -1;
	if (hg_remote_arena)
		munmap(hg_remote_arena, hg_remote_arena_size);
	hg_remote_arena = NULL;
	hg_shadow_shared = 0;
}

/* ---- the detector process ---- */

void *hg_serve_map(int memfd, uint64_t arena, uint64_t size)
{
	if (!hg_map_published(memfd))
		return NULL;
	int fixed = MAP_FIXED_NOREPLACE;
	for (size_t h = 0; h < sizeof hg_arena_hints / sizeof hg_arena_hints[0]; h++)
		if (arena == hg_arena_hints[h] && size <= hg_reserved[h])
			fixed = MAP_FIXED; /* over this process's own reservation */
	void *p = mmap((void *)(uintptr_t)arena, size, PROT_READ | PROT_WRITE, MAP_SHARED | fixed | MAP_NORESERVE, memfd,
		       (off_t)HG_PUB_BYTES);
	if (p == (void *)(uintptr_t)arena)
		return p;
	if (p != MAP_FAILED) {
		munmap(p, size);
		errno = EEXIST; /* a kernel without MAP_FIXED_NOREPLACE put it elsewhere */
	}
	return NULL;
}

void hg_serve(const char *spec)
{
	int sock, memfd, err;
	if (sscanf(spec, "%d,%d,%d", &sock, &memfd, &err) != 3)
		_exit(2);
	hg_opts.err_fd = err;
	if (hgGoInit(&hg_opts) != 0)
		_exit(2);
	hgGoServe(sock, memfd);
	_exit(0);
}
