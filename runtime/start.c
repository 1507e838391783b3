/* start.c: start-up and exit of the runtime in a rewritten program.
 *
 * It owns the options (hg_opts), the constructor and destructor, the fork
 * handler, the exit statistics and the runtime's output (hg_print,
 * hg_halt).
 *
 * At start-up (a constructor that runs after the Go runtime's initialiser,
 * see TestRuntimeInitOrder) it reads HG_OPTIONS through the Go side, finds
 * the header hgrewrite left in the main program and fills its entry slots.
 * At exit (the destructor, or _exit and _Exit, which skip it) it prints
 * the statistics and the race summary and applies the exit-status rule.
 * Nothing here calls into Go in a forked child: a child inherits the Go
 * runtime's locks but not its threads. Detection pauses there until the
 * child starts threads, and then goes on in a detector process of the
 * child's own (remote.c).
 */
#define _GNU_SOURCE
#include "rt_internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <stdarg.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "_cgo_export.h"

struct hg_options hg_opts = {.err_fd = 2, .exitcode = 66};
static pid_t hg_pid; /* the process detection runs in (a forked child's once its detector started) */
static int hg_log_pid;  /* the pid log files are named by, if not this process's */

void hg_set_log_pid(int pid) { hg_log_pid = pid; }
static struct hg_header *hg_hdr;
static uint64_t hg_bias; /* load bias of the main program */

static int hg_log_failed; /* a log file could not be opened: said once */

/* hg_write_all writes line to fd whole, as far as it can. */
static void hg_write_all(int fd, const char *line)
{
	size_t n = strlen(line);
	while (n > 0) {
		ssize_t w = write(fd, line, n);
		if (w <= 0)
			break;
		line += w;
		n -= (size_t)w;
	}
}

/* hg_print writes one line to the runtime's stderr, or to log_path.<pid>.
 * A log file that cannot be opened is said so on stderr, once, with
 * why (as ThreadSanitizer's users expect); output goes to stderr then. */
void hg_print(const char *line)
{
	int saved = errno, fd = hg_opts.err_fd, opened = 0;
	if (hg_opts.log_path[0]) {
		char path[sizeof hg_opts.log_path + 32];
		snprintf(path, sizeof path, "%s.%d", hg_opts.log_path, hg_log_pid ? hg_log_pid : (int)getpid());
		int f = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (f >= 0) {
			fd = f, opened = 1;
		} else if (!__atomic_exchange_n(&hg_log_failed, 1, __ATOMIC_ACQ_REL)) {
			char why[sizeof path + 160];
			snprintf(why, sizeof why, "hgrewrite: cannot open the log file %s (log_path): %s; writing to stderr\n",
				 path, strerror(errno));
			hg_write_all(fd, why);
		}
	}
	hg_write_all(fd, line);
	if (opened)
		close(fd);
	errno = saved;
}

typedef void (*hg_exit_fn)(int);
static hg_exit_fn hg_real_exit, hg_real_Exit; /* resolved at load: see wrap.h */

/* hg_exit_now ends the process without ending detection: the runtime's
 * own exits must not go through the _exit wrapper below, which finishes
 * detection (halt_on_error calls in with the reporter's lock held, and
 * finishing waits for that lock). */
static void hg_exit_now(int code) __attribute__((noreturn));
static void hg_exit_now(int code)
{
	if (hg_real_exit)
		hg_real_exit(code);
	syscall(SYS_exit_group, code);
	__builtin_unreachable();
}

void hg_halt(int code)
{
	fflush(NULL);
	hg_exit_now(code);
}

static void hg_fatal(const char *msg)
{
	char line[512];
	snprintf(line, sizeof line, "hgrewrite runtime: %s\n", msg);
	hg_print(line);
	hg_exit_now(2);
}

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
			hg_bias = info->dlpi_addr;
			break;
		}
	}
	return 1; /* the first object is the main program: stop there */
}

static int hg_forked; /* this process is a forked child, detection off until it starts threads */
static int hg_forked_tried; /* hg_forked_threads tried to start the child's detector */

static void hg_atfork_child(void)
{
	hg_threads_forked();
	hg_records_forked();
	hg_remote_forked();
	hg_lockorder_forget(); /* the child's detector starts with no lock-order graph */
	hg_lkg_forked();
	hg_lsm_off = 1; /* the child's detector makes locksets of its own */
	hg_forked_tried = 0;
	hg_clocks = NULL; /* the parent's threads' (a child's detector mirrors none) */
	if (hg_detect) {
		hg_detect = 0;
		hg_forked = 1;
	}
}

/* hg_forked_threads runs when a thread is created with detection off. In
 * a forked child that is the moment detection starts to matter (a child
 * with one thread has nothing to race with): the child starts a detector
 * process of its own (remote.c) and the calling thread becomes its thread
 * 0; the memory the child inherited counts as that thread's. A child that
 * only execs never gets here. It returns 1 when detection is on now; when
 * the detector cannot start, the child says so, once, at any verbosity. */
int hg_forked_threads(void)
{
	if (!hg_forked || __atomic_exchange_n(&hg_forked_tried, 1, __ATOMIC_ACQ_REL))
		return 0;
	const char *why = "";
	int32_t tid = hg_remote_start(hg_bias, &why);
	if (tid >= 0) {
		hg_forked_record(hg_current(), tid);
		hg_pid = getpid();
		hg_forked = 0;
		__atomic_store_n(&hg_detect, 1, __ATOMIC_RELEASE);
		if (hg_opts.verbosity > 0) {
			char line[128];
			snprintf(line, sizeof line, "hgrewrite: pid %d: a forked child starts threads: detection goes on in it\n",
				 (int)getpid());
			hg_print(line);
		}
		return 1;
	}
	char line[256];
	snprintf(line, sizeof line, "hgrewrite: pid %d is a forked child that starts threads: race detection is off in it (%s)\n",
		 (int)getpid(), why);
	hg_print(line);
	return 0;
}

/* hg_private_stderr duplicates stderr far above the descriptors programs
 * use (1023, or just under a lower limit), close-on-exec: programs may
 * close fd 2 before they exit, and the reports must still get out. It
 * runs before the Go runtime starts its threads (hg_block_for_go): the
 * descriptor table grows to hold it, and growing the table of a process
 * with more than one thread waits for an RCU grace period, which took
 * 6 ms of the 8 ms that an empty program's start-up spent asleep. */
static int hg_private_stderr(void)
{
	int target = 1023;
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < 1024)
		target = rl.rlim_cur > 16 ? (int)rl.rlim_cur - 1 : 3;
	int fd = fcntl(2, F_DUPFD_CLOEXEC, target);
	if (fd < 0)
		fd = fcntl(2, F_DUPFD_CLOEXEC, 100);
	return fd < 0 ? 2 : fd;
}

/* The Go runtime's threads must not take the program's signals: a signal
 * sent to the process goes to any thread that does not block it, and a
 * program that blocks a signal in its own threads to take it with
 * sigwait or signalfd (or runs its handler on a dedicated thread) would
 * see it delivered to one of the runtime's threads instead, where its
 * default action may kill the process. The Go runtime takes the mask of
 * the thread that starts it for all its threads, and it starts from its
 * own initialiser in this library, which runs after prioritised
 * constructors: this one blocks the asynchronous signals, and hg_init
 * gives the program's thread its mask back once the runtime is up. The
 * signals a fault raises stay open: they go to the faulting thread. */
static sigset_t hg_program_mask;
static int hg_mask_saved;

__attribute__((constructor(101))) static void hg_block_for_go(void)
{
	sigset_t all;
	sigfillset(&all);
	static const int faults[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS};
	for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++)
		sigdelset(&all, faults[i]);
	hg_mask_saved = pthread_sigmask(SIG_BLOCK, &all, &hg_program_mask) == 0;
	hg_opts.err_fd = hg_private_stderr();
}

static void hg_restore_mask(void)
{
	if (hg_mask_saved) {
		pthread_sigmask(SIG_SETMASK, &hg_program_mask, NULL);
		hg_mask_saved = 0;
	}
}

__attribute__((constructor)) static void hg_init(void)
{
	const char *serve = getenv("HG_SERVE");
	if (serve)
		hg_serve(serve); /* a forked child's detector process (remote.c): never returns */
	hg_pid = getpid();
	hg_remote_save_options();
	hg_arena_init();
	int init = hgGoInit(&hg_opts);
	hg_restore_mask();
	if (init != 0)
		_exit(2); /* the Go side printed why */
	hg_walk_objects(hg_find_phdr, &hg_hdr);
	if (hg_hdr == NULL)
		return; /* loaded by a program hgrewrite did not rewrite: nothing to do */
	/* backtrace loads the unwinder on its first call: do it now, not in a
	 * report made from a wrapper a signal handler called */
	void *warm[1];
	backtrace(warm, 1);
	if (hg_hdr->version != HG_VERSION)
		hg_fatal("this executable was rewritten by a different hgrewrite version; rewrite it again");
	pthread_atfork(NULL, NULL, hg_atfork_child);
	hg_vector_state(hg_hdr->flags);
	hg_threads_init();
	hg_records_init();
	hg_spin_init();
	struct hg_thread *t = hg_current();
	if (hg_opts.detect) {
		hg_set_tid(t, hgGoMainThread((GoUint64)hg_bias));
		hg_detect = t->tid >= 0;
		if (hg_detect) { /* another thread may name it by its pthread_t */
			hgGoThreadHandle(t->tid, (GoUint64)pthread_self());
			hg_trace_own(t->tid);
			hg_trace_init(hg_hdr);
		}
	}
	hg_hdr->slot_access = (uint64_t)(uintptr_t)&hg_access;
	hg_hdr->slot_range = (uint64_t)(uintptr_t)&hg_range;
	hg_hdr->slot_batch = (uint64_t)(uintptr_t)&hg_access_batch;
}

static void hg_print_stats(void)
{
	uint64_t acc = 0, ranges = 0, bytes = 0, threads = 0, deferred[HG_DEFER_KINDS] = {0}, go = 0, sig_dropped = 0;
	uint64_t pub_go = 0, pub_c = 0, go_calls = 0;
	for (struct hg_thread *t = hg_threads_head(); t; t = t->next) {
		acc += t->accesses;
		ranges += t->ranges;
		bytes += t->bytes;
		threads += t->served + (t->accesses + t->ranges > t->mark); /* not the Go runtime's own threads */
		for (int k = 0; k < HG_DEFER_KINDS; k++)
			deferred[k] += t->deferred[k], go += t->deferred[k];
		sig_dropped += t->sig_dropped;
		pub_go += t->pub_go;
		pub_c += t->pub_c;
		go_calls += t->go_calls;
	}
	char line[512];
	snprintf(line, sizeof line,
		 "hgrewrite: pid %d: %llu memory accesses checked, %llu string ranges (%llu bytes), %llu threads\n",
		 (int)getpid(), (unsigned long long)acc, (unsigned long long)ranges, (unsigned long long)bytes,
		 (unsigned long long)threads);
	hg_print(line);
	if (!hg_detect && !go)
		return;
	static const char *const why[HG_DEFER_KINDS] = {
		[HG_DEFER_NEW] = "new",           [HG_DEFER_OWN] = "own, owner's lockset changes",
		[HG_DEFER_LOCKS_UNKNOWN] = "own, thread's locks not known in C",
		[HG_DEFER_OTHER_EXCL] = "another thread's", [HG_DEFER_SHARED] = "shared",
		[HG_DEFER_SYNC] = "sync variable", [HG_DEFER_RACE] = "raced",
		[HG_DEFER_SPLIT] = "split",       [HG_DEFER_UNMAPPED] = "no shadow yet",
		[HG_DEFER_RANGE] = "range",       [HG_DEFER_SYNC_EVENT] = "atomic, hook or spin",
	};
	int n = snprintf(line, sizeof line, "hgrewrite: pid %d: %llu calls into the detector's Go side, %llu events went there:",
			 (int)getpid(), (unsigned long long)go_calls, (unsigned long long)go);
	for (int k = 0; k < HG_DEFER_KINDS && n < (int)sizeof line; k++)
		if (deferred[k])
			n += snprintf(line + n, sizeof line - n, " %s %llu,", why[k], (unsigned long long)deferred[k]);
	if (n > 0 && n < (int)sizeof line && line[n - 1] == ',')
		line[n - 1] = 0;
	strncat(line, "\n", sizeof line - strlen(line) - 1);
	hg_print(line);
	if (pub_go + pub_c) {
		snprintf(line, sizeof line,
			 "hgrewrite: pid %d: %llu lock-protected regions published by the Go side, %llu in C "
			 "(regionpub.c)\n",
			 (int)getpid(), (unsigned long long)pub_go, (unsigned long long)pub_c);
		hg_print(line);
	}
	if (sig_dropped) {
		snprintf(line, sizeof line,
			 "hgrewrite: pid %d: %llu accesses in signal handlers not checked (more than %d between two flushes)\n",
			 (int)getpid(), (unsigned long long)sig_dropped, HG_SIG_EVENTS);
		hg_print(line);
	}
}

/* hg_check_lockview reports, whatever the options, flushes that found a
 * thread's lock view out of step with the Go side (lockview.c): a bug of
 * the runtime's, which would make locked accesses count as unlocked. */
static void hg_check_lockview(void)
{
	uint64_t n = 0;
	for (struct hg_thread *t = hg_threads_head(); t; t = t->next)
		n += t->lk_mismatch;
	if (n) {
		char line[200];
		snprintf(line, sizeof line,
			 "hgrewrite: pid %d: internal error: the fast path's locksets were out of step %llu times (lockview.c)\n",
			 (int)getpid(), (unsigned long long)n);
		hg_print(line);
	}
}

/* hg_finish ends detection (once): the calling thread's events go to the
 * Go side, which prints the reports still waiting and the summary. It
 * returns the number of races reported. */
static int hg_finish(void)
{
	static int done, races;
	if (hg_hdr == NULL || __atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL))
		return races;
	if (hg_detect && getpid() == hg_pid) {
		struct hg_thread *t = hg_current();
		hg_flush(t);
		t->in_rt = 1; /* from here on, accesses are only counted */
		races = hg_d_finish();
	}
	hg_check_lockview();
	if (hg_opts.stats)
		hg_print_stats();
	return races;
}

__attribute__((destructor)) static void hg_fini(void)
{
	if (hg_finish() > 0 && hg_opts.exitcode != 0) {
		fflush(NULL); /* the program's buffered output must not be lost */
		hg_exit_now(hg_opts.exitcode);
	}
}

/* _exit and _Exit skip the destructors: detection ends here instead, with
 * the same summary and exit status, and without flushing the program's
 * stdio (the reason to call _exit). A forked child, where detection is
 * off, goes straight through. */

__attribute__((constructor)) static void hg_resolve_exits(void)
{
	hg_real_exit = (hg_exit_fn)dlsym(RTLD_NEXT, "_exit");
	hg_real_Exit = (hg_exit_fn)dlsym(RTLD_NEXT, "_Exit");
}

static void hg_exit_via(hg_exit_fn real, int status) __attribute__((noreturn));
static void hg_exit_via(hg_exit_fn real, int status)
{
	/* a vfork child shares the parent's memory: it must not end the
	 * parent's detection */
	if (getpid() == hg_pid && hg_finish() > 0 && hg_opts.exitcode != 0)
		status = hg_opts.exitcode;
	if (real)
		real(status);
	syscall(SYS_exit_group, status);
	__builtin_unreachable();
}

void _exit(int status)
{
	hg_exit_via(hg_real_exit, status);
}

void _Exit(int status)
{
	hg_exit_via(hg_real_Exit, status);
}
/* clone without CLONE_VM makes a child process without running the fork
 * handlers: a child that keeps detection on would call into a Go runtime
 * that has no threads there and wait forever for locks another thread
 * held at the clone. The child's function runs behind hg_clone_child,
 * which switches detection off first, as the fork handler does. */
struct hg_clone_call {
	int (*fn)(void *);
	void *arg;
};

static int hg_clone_child(void *p)
{
	struct hg_clone_call c = *(struct hg_clone_call *)p; /* the child's copy */
	hg_atfork_child();
	return c.fn(c.arg);
}

typedef int (*hg_clone_fn)(int (*)(void *), void *, int, void *, ...);
static hg_clone_fn hg_real_clone;

__attribute__((constructor)) static void hg_resolve_clone(void)
{
	hg_real_clone = (hg_clone_fn)dlsym(RTLD_NEXT, "clone");
}

int clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	void *ptid = va_arg(ap, void *), *tls = va_arg(ap, void *), *ctid = va_arg(ap, void *);
	va_end(ap);
	if (!hg_real_clone)
		hg_resolve_clone();
	if (flags & CLONE_VM)
		return hg_real_clone(fn, stack, flags, arg, ptid, tls, ctid);
	struct hg_clone_call *c = malloc(sizeof *c);
	if (!c)
		return hg_real_clone(fn, stack, flags, arg, ptid, tls, ctid);
	c->fn = fn;
	c->arg = arg;
	int r = hg_real_clone(hg_clone_child, stack, flags, c, ptid, tls, ctid);
	free(c); /* the parent's; the child works on its own copy */
	return r;
}
