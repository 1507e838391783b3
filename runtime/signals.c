/* signals.c: the program's signal handlers run behind hg_sig_entry.
 *
 * It owns the wrappers of sigaction, signal, bsd_signal, sysv_signal and
 * of longjmp/siglongjmp (which can leave a handler without returning).
 *
 * A handler interrupts whatever the thread was doing, possibly the middle
 * of a buffer update in the runtime's C side, and it may run on a thread
 * the runtime does not know (one of the Go runtime's own): nothing in it
 * may call into Go. So every handler the program installs runs behind
 * hg_sig_entry, which marks the thread as inside the runtime (in_rt) for
 * the handler's duration: the handler's accesses are dropped, wrappers it
 * calls track nothing and flush nothing, and a thread without a record
 * uses hg_overflow, which never buffers. The program sees its own
 * handlers: sigaction reports what the program installed, not
 * hg_sig_entry.
 *
 * Signal delivery is synchronisation: sending a signal (kill, raise,
 * pthread_kill, tgkill, sigqueue, pthread_sigqueue) releases onto the
 * signal's object, and taking it acquires: a handler's entry, or the
 * return of sigwait, sigwaitinfo or sigtimedwait. A thread that fills a
 * request and wakes a worker with pthread_kill hands the request over. A
 * handler cannot call into Go, so its entry only notes the signal and
 * where the thread's buffer stood; the thread's next flush puts the
 * acquire there (hg_sig_acquires).
 */
#define _GNU_SOURCE
#include "wrap.h"

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>

/* The program's handler and flags per signal, as it installed them.
 * Handlers are read by hg_sig_entry at any moment: each is one atomic
 * word (hg_sig_entry always passes three arguments, which a one-argument
 * handler ignores, so a flags word read out of step does no harm). */
static void *_Atomic hg_user_handler[NSIG];
static _Atomic int hg_user_flags[NSIG];
static sigset_t hg_user_mask[NSIG]; /* only reported back by sigaction */

/* Depth of handlers without a record on this thread: hg_self is
 * hg_overflow meanwhile. */
static __thread int hg_sig_unregistered __attribute__((tls_model("initial-exec")));

static void hg_sig_enter(struct hg_thread **t)
{
	struct hg_thread *self = hg_self;
	if (!self || self == &hg_overflow) {
		hg_sig_unregistered++;
		hg_self = &hg_overflow;
		*t = NULL;
		return;
	}
	if (self->sig_depth++ == 0)
		self->sig_saved_rt = self->in_rt;
	self->in_rt = 1;
	*t = self;
}

/* hg_sig_taken notes that t's handler for sig runs (signal context). */
static void hg_sig_taken(struct hg_thread *t, int sig)
{
	if (!t || sig < 1 || sig > 64)
		return;
	if (t->sig_acq == 0)
		t->sig_mark = t->n; /* an event half written counts as after */
	__atomic_fetch_or(&t->sig_acq, 1ull << (sig - 1), __ATOMIC_RELAXED);
}

/* signal objects: an address per signal number stands for it */
static char hg_sig_obj[65];

static struct hg_event hg_sig_acquire_event(int sig)
{
	struct hg_event e = {(uint64_t)(uintptr_t)&hg_sig_obj[sig], HG_INFO(0, 0, HG_ATOMIC | HG_POST), 0};
	return e;
}

/* hg_sig_acquires takes the signals whose handlers ran on t since the
 * last flush: it fills ev (up to max) with their acquires and sets *mark
 * to the buffer position they go to. Called by the flush, outside any
 * handler (a handler arriving meanwhile is noted for the next flush). */
uint32_t hg_sig_acquires(struct hg_thread *t, struct hg_event *ev, uint32_t max, uint32_t *mark)
{
	if (!t->sig_acq)
		return 0;
	*mark = t->sig_mark;
	uint64_t bits = __atomic_exchange_n(&t->sig_acq, 0, __ATOMIC_RELAXED);
	uint32_t n = 0;
	for (int sig = 1; sig <= 64; sig++) {
		if (!(bits & (1ull << (sig - 1))))
			continue;
		if (n == max) { /* the rest at the next flush, from its start */
			__atomic_fetch_or(&t->sig_acq, bits & ~((1ull << (sig - 1)) - 1), __ATOMIC_RELAXED);
			t->sig_mark = 0;
			break;
		}
		ev[n++] = hg_sig_acquire_event(sig);
	}
	return n;
}

/* hg_sig_send: t is about to send sig (to any thread or process). */
static void hg_sig_send(void *ra, int sig)
{
	if (sig < 1 || sig > 64)
		return; /* 0 only tests the target */
	struct hg_thread *t = hg_active(ra);
	if (t)
		GO(t, hg_d_release(t->tid, (uint64_t)(uintptr_t)&hg_sig_obj[sig]));
}

/* hg_sig_waited: t took sig with a sigwait call. */
static void hg_sig_waited(void *ra, int sig)
{
	if (sig < 1 || sig > 64)
		return;
	struct hg_thread *t = hg_active(ra);
	if (t)
		GO(t, hg_d_acquire(t->tid, (uint64_t)(uintptr_t)&hg_sig_obj[sig]));
}

static void hg_sig_leave(struct hg_thread *t)
{
	if (!t) {
		if (--hg_sig_unregistered == 0)
			hg_self = NULL;
		return;
	}
	if (--t->sig_depth == 0)
		t->in_rt = t->sig_saved_rt;
}

static void hg_sig_entry(int sig, siginfo_t *info, void *ctx)
{
	int saved = errno;
	void *h = atomic_load_explicit(&hg_user_handler[sig], memory_order_acquire);
	if (h == (void *)SIG_DFL || h == (void *)SIG_IGN)
		return; /* changed while this signal was on its way */
	if (atomic_load_explicit(&hg_user_flags[sig], memory_order_relaxed) & SA_RESETHAND)
		atomic_store_explicit(&hg_user_handler[sig], (void *)SIG_DFL, memory_order_release); /* the kernel reset it */
	struct hg_thread *t;
	hg_sig_enter(&t);
	hg_sig_taken(t, sig);
	errno = saved;
	((void (*)(int, siginfo_t *, void *))h)(sig, info, ctx);
	saved = errno;
	hg_sig_leave(t);
	errno = saved;
}

/* hg_sig_jumped: a longjmp leaves the handlers the thread is in (a SIGSEGV
 * handler that recovers with siglongjmp). */
static void hg_sig_jumped(void)
{
	struct hg_thread *t = hg_self;
	if (hg_sig_unregistered) {
		hg_sig_unregistered = 0;
		hg_self = NULL;
	} else if (t && t != &hg_overflow && t->sig_depth) {
		t->sig_depth = 0;
		t->in_rt = t->sig_saved_rt;
	}
}

static int hg_user_installs(const struct sigaction *act)
{
	return act && act->sa_handler != SIG_DFL && act->sa_handler != SIG_IGN;
}

DEFINE_REAL(int, sigaction, int, const struct sigaction *, struct sigaction *)

/* hg_sigaction is sigaction for the program: its handler goes behind
 * hg_sig_entry. */
static int hg_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	resolve_sigaction();
	if (sig <= 0 || sig >= NSIG)
		return REAL(sigaction)(sig, act, old);
	struct sigaction mine, prev;
	const struct sigaction *use = act;
	if (hg_user_installs(act)) {
		mine = *act;
		mine.sa_sigaction = hg_sig_entry;
		/* SA_ONSTACK: on the Go runtime's threads the handler must run
		 * on their signal stack, not on a goroutine's small stack
		 * (threads without one ignore the flag) */
		mine.sa_flags |= SA_SIGINFO | SA_ONSTACK;
		use = &mine;
	}
	/* publish the program's handler before the kernel may call it */
	void *before = atomic_load_explicit(&hg_user_handler[sig], memory_order_relaxed);
	int before_flags = atomic_load_explicit(&hg_user_flags[sig], memory_order_relaxed);
	sigset_t before_mask = hg_user_mask[sig];
	if (act) {
		atomic_store_explicit(&hg_user_flags[sig], act->sa_flags, memory_order_relaxed);
		atomic_store_explicit(&hg_user_handler[sig], (void *)act->sa_handler, memory_order_release);
		hg_user_mask[sig] = act->sa_mask;
	}
	int r = REAL(sigaction)(sig, use, &prev);
	if (r != 0) {
		if (act) {
			atomic_store_explicit(&hg_user_flags[sig], before_flags, memory_order_relaxed);
			atomic_store_explicit(&hg_user_handler[sig], before, memory_order_release);
			hg_user_mask[sig] = before_mask;
		}
		return r;
	}
	if (old) {
		*old = prev;
		if (prev.sa_sigaction == hg_sig_entry) {
			/* what the program installed, not the entry point */
			old->sa_handler = (void (*)(int))before;
			old->sa_flags = before_flags;
			old->sa_mask = before_mask;
		}
	}
	return r;
}

int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	if (hg_from_runtime(RA)) { /* the Go runtime's own handlers */
		resolve_sigaction();
		return REAL(sigaction)(sig, act, old);
	}
	return hg_sigaction(sig, act, old);
}

/* signal and its variants go through sigaction with the flags glibc gives
 * them (glibc's own signal calls its internal sigaction, which this
 * library cannot see). */
static sighandler_t hg_signal_with(int sig, sighandler_t h, int flags, int mask_self)
{
	struct sigaction act, old;
	memset(&act, 0, sizeof act);
	act.sa_handler = h;
	sigemptyset(&act.sa_mask);
	if (mask_self && sig > 0 && sig < NSIG)
		sigaddset(&act.sa_mask, sig);
	act.sa_flags = flags;
	if (hg_sigaction(sig, &act, &old) < 0)
		return SIG_ERR;
	return old.sa_handler;
}

sighandler_t signal(int sig, sighandler_t h)
{
	return hg_signal_with(sig, h, SA_RESTART, 1);
}

sighandler_t bsd_signal(int sig, sighandler_t h)
{
	return hg_signal_with(sig, h, SA_RESTART, 1);
}

sighandler_t sysv_signal(int sig, sighandler_t h)
{
	return hg_signal_with(sig, h, SA_RESETHAND | SA_NODEFER, 0);
}

#define JUMP_WRAPPER(name, buf_type)                                 \
	DEFINE_REAL(void, name, buf_type, int)                       \
	void name(buf_type env, int val)                             \
	{                                                            \
		resolve_##name();                                    \
		hg_sig_jumped();                                     \
		REAL(name)(env, val);                                \
		__builtin_unreachable();                             \
	}

JUMP_WRAPPER(longjmp, jmp_buf)
JUMP_WRAPPER(_longjmp, jmp_buf)
JUMP_WRAPPER(siglongjmp, sigjmp_buf)
JUMP_WRAPPER(__longjmp_chk, sigjmp_buf) /* longjmp under _FORTIFY_SOURCE */

/* ---- sending and waiting: release and acquire on the signal ---- */

DEFINE_REAL(int, kill, pid_t, int)
int kill(pid_t pid, int sig)
{
	resolve_kill();
	hg_sig_send(RA, sig);
	return REAL(kill)(pid, sig);
}

DEFINE_REAL(int, raise, int)
int raise(int sig)
{
	resolve_raise();
	hg_sig_send(RA, sig);
	return REAL(raise)(sig);
}

DEFINE_REAL(int, pthread_kill, pthread_t, int)
int pthread_kill(pthread_t th, int sig)
{
	resolve_pthread_kill();
	hg_sig_send(RA, sig);
	return REAL(pthread_kill)(th, sig);
}

DEFINE_REAL(int, tgkill, pid_t, pid_t, int)
int tgkill(pid_t tgid, pid_t tid, int sig)
{
	resolve_tgkill();
	hg_sig_send(RA, sig);
	return REAL(tgkill)(tgid, tid, sig);
}

DEFINE_REAL(int, sigqueue, pid_t, int, const union sigval)
int sigqueue(pid_t pid, int sig, const union sigval val)
{
	resolve_sigqueue();
	hg_sig_send(RA, sig);
	return REAL(sigqueue)(pid, sig, val);
}

DEFINE_REAL(int, pthread_sigqueue, pthread_t, int, const union sigval)
int pthread_sigqueue(pthread_t th, int sig, const union sigval val)
{
	resolve_pthread_sigqueue();
	hg_sig_send(RA, sig);
	return REAL(pthread_sigqueue)(th, sig, val);
}

/* The waits flush before blocking (blocking.c does the same for the
 * other blocking calls) and acquire what they took. */
DEFINE_REAL(int, sigwait, const sigset_t *, int *)
int sigwait(const sigset_t *set, int *sig)
{
	resolve_sigwait();
	hg_active(RA);
	int r = REAL(sigwait)(set, sig);
	if (r == 0)
		hg_sig_waited(RA, *sig);
	return r;
}

DEFINE_REAL(int, sigwaitinfo, const sigset_t *, siginfo_t *)
int sigwaitinfo(const sigset_t *set, siginfo_t *info)
{
	resolve_sigwaitinfo();
	hg_active(RA);
	int r = REAL(sigwaitinfo)(set, info);
	if (r > 0)
		hg_sig_waited(RA, r);
	return r;
}

DEFINE_REAL(int, sigtimedwait, const sigset_t *, siginfo_t *, const struct timespec *)
int sigtimedwait(const sigset_t *set, siginfo_t *info, const struct timespec *ts)
{
	resolve_sigtimedwait();
	hg_active(RA);
	int r = REAL(sigtimedwait)(set, info, ts);
	if (r > 0)
		hg_sig_waited(RA, r);
	return r;
}
