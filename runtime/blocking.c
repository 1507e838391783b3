/* blocking.c: calls that may block the thread for long (sleeps, waits for
 * descriptors or signals, yields).
 *
 * It owns their wrappers, which only hand the thread's buffered accesses
 * to the Go side before the call (hg_parking): a thread that blocks
 * until the program exits (a worker parked in pause() or sleep() while
 * main returns) would otherwise keep its last accesses in its buffer,
 * unchecked, and a race with them would be missed. The flush costs
 * nothing when the buffer holds no access. Inside a signal handler
 * nothing happens (signals.c).
 */
#define _GNU_SOURCE
#include "wrap.h"

#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

#define BLOCKING(ret, name, params, args, ...)  \
	DEFINE_REAL(ret, name, __VA_ARGS__)     \
	ret name params                         \
	{                                       \
		resolve_##name();               \
		hg_parking(RA);                 \
		return REAL(name) args;         \
	}

BLOCKING(unsigned int, sleep, (unsigned int s), (s), unsigned int)
BLOCKING(int, usleep, (useconds_t us), (us), useconds_t)
BLOCKING(int, nanosleep, (const struct timespec *req, struct timespec *rem), (req, rem), const struct timespec *,
	 struct timespec *)
BLOCKING(int, clock_nanosleep, (clockid_t c, int flags, const struct timespec *req, struct timespec *rem),
	 (c, flags, req, rem), clockid_t, int, const struct timespec *, struct timespec *)
BLOCKING(int, pause, (void), (), void)
BLOCKING(int, sched_yield, (void), (), void)
BLOCKING(int, poll, (struct pollfd *fds, nfds_t n, int timeout), (fds, n, timeout), struct pollfd *, nfds_t, int)
BLOCKING(int, ppoll, (struct pollfd *fds, nfds_t n, const struct timespec *ts, const sigset_t *mask),
	 (fds, n, ts, mask), struct pollfd *, nfds_t, const struct timespec *, const sigset_t *)
BLOCKING(int, select, (int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *tv), (n, r, w, e, tv), int, fd_set *,
	 fd_set *, fd_set *, struct timeval *)
BLOCKING(int, pselect, (int n, fd_set *r, fd_set *w, fd_set *e, const struct timespec *ts, const sigset_t *mask),
	 (n, r, w, e, ts, mask), int, fd_set *, fd_set *, fd_set *, const struct timespec *, const sigset_t *)
BLOCKING(int, epoll_wait, (int ep, struct epoll_event *ev, int n, int timeout), (ep, ev, n, timeout), int,
	 struct epoll_event *, int, int)
BLOCKING(int, epoll_pwait, (int ep, struct epoll_event *ev, int n, int timeout, const sigset_t *mask),
	 (ep, ev, n, timeout, mask), int, struct epoll_event *, int, int, const sigset_t *)
BLOCKING(int, sigsuspend, (const sigset_t *mask), (mask), const sigset_t *)
/* sigwait, sigwaitinfo and sigtimedwait: signals.c (they acquire) */
