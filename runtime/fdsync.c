/* fdsync.c: synchronisation through the kernel that the program's memory
 * accesses do not show.
 *
 * File descriptors. Data written into a pipe, a socket or an eventfd and
 * read on the other end is a hand-off: a write (write, send, ...)
 * releases on the descriptor's synchronisation object before the data can
 * be seen, and a read (read, recv, ...) that returns data acquires it.
 * Both ends of a pipe or a socketpair share one object; every socket made
 * by socket(), accept() or accept4() shares one object for all sockets (the
 * two ends of a connection are different descriptors, and often made in
 * different ways); any other descriptor is its own object. dup'd
 * descriptors share the original's object; close forgets it.
 *
 * Descriptor numbers. The kernel hands out the lowest free number, under
 * its descriptor table's lock: a thread that gets a number from socket,
 * accept, dup or pipe is ordered after the thread that closed it before.
 * Servers keep a connection's record by its number (memcached's
 * conns[fd]): the worker that closes a connection and the one that sets
 * up the next connection on the same number use the record in turn, and
 * only the kernel orders them (an outsider's memcached run: 40 distinct
 * false reports a minute on its connection records). close releases on
 * the number's object, and those calls acquire it.
 *
 * Futexes. libstdc++ waits for futures, promises, std::atomic::wait and
 * the C++20 latch, barrier and semaphore with syscall(SYS_futex): a wake
 * releases on the futex word, and a wait acquires it when it returns.
 *
 * The objects are addresses above the user address space, so they never
 * meet a program's own synchronisation objects.
 */
#define _GNU_SOURCE
#include "wrap.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <stdarg.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

/* ---- descriptors' synchronisation objects ---- */

#define HG_FD_OBJ_BASE 0xffff900000000000ull
#define HG_FD_MAX 65536
#define HG_FD_SOCKETS 1 /* the object of every socket */

/* fd_obj[fd]: the descriptor's object number, 0 for its own (fd + 1 + the
 * numbers handed out below). Updated with atomics: threads open and close
 * descriptors concurrently. */
static uint64_t fd_obj[HG_FD_MAX];
static uint64_t fd_next = 2; /* object numbers for pipes and socketpairs */

static uint64_t hg_fd_obj(int fd)
{
	if (fd < 0 || fd >= HG_FD_MAX)
		return 0;
	uint64_t o = __atomic_load_n(&fd_obj[fd], __ATOMIC_RELAXED);
	return HG_FD_OBJ_BASE + (o ? o : (uint64_t)HG_FD_MAX + (uint64_t)fd) * 8;
}

static void hg_fd_set(int fd, uint64_t o)
{
	if (fd >= 0 && fd < HG_FD_MAX)
		__atomic_store_n(&fd_obj[fd], o, __ATOMIC_RELAXED);
}

static uint64_t hg_fd_get(int fd)
{
	return fd >= 0 && fd < HG_FD_MAX ? __atomic_load_n(&fd_obj[fd], __ATOMIC_RELAXED) : 0;
}

/* hg_fd_sync: the thread at ra releases on obj (release) or acquires
 * it; nothing for an object of no descriptor (0). */
static void hg_fd_sync(void *ra, uint64_t obj, int release)
{
	struct hg_thread *t = hg_active(ra);
	if (!t || !obj)
		return;
	if (release)
		GO(t, hg_d_release(t->tid, obj));
	else
		GO(t, hg_d_acquire(t->tid, obj));
}

/* hg_fd_num_sync: the thread at ra closes descriptor fd (release) or
 * got it from the kernel (acquire): the number's object (above). */
#define HG_FD_NUM_BASE 0xffff980000000000ull

static void hg_fd_num_sync(void *ra, int fd, int release)
{
	if (fd >= 0 && fd < HG_FD_MAX)
		hg_fd_sync(ra, HG_FD_NUM_BASE + (uint64_t)fd * 8, release);
}

/* hg_fd_pair: the two ends of a pipe or socketpair the thread at ra just
 * got share an object; their numbers are acquired (hg_fd_num_sync). */
static void hg_fd_pair(void *ra, const int fds[2])
{
	uint64_t o = __atomic_fetch_add(&fd_next, 1, __ATOMIC_RELAXED);
	hg_fd_set(fds[0], o);
	hg_fd_set(fds[1], o);
	hg_fd_num_sync(ra, fds[0], 0);
	hg_fd_num_sync(ra, fds[1], 0);
}

/* hg_fd_release: a write to fd is about to make data visible. */
static void hg_fd_release(void *ra, int fd)
{
	hg_fd_sync(ra, hg_fd_obj(fd), 1);
}

/* hg_fd_acquire: a read from fd returned n bytes. */
static void hg_fd_acquire(void *ra, int fd, ssize_t n)
{
	if (n > 0)
		hg_fd_sync(ra, hg_fd_obj(fd), 0);
}

/* ---- making, copying and closing descriptors ---- */

DEFINE_REAL(int, pipe, int *)
DEFINE_REAL(int, pipe2, int *, int)
DEFINE_REAL(int, socketpair, int, int, int, int *)
DEFINE_REAL(int, socket, int, int, int)
DEFINE_REAL(int, accept, int, struct sockaddr *, socklen_t *)
DEFINE_REAL(int, accept4, int, struct sockaddr *, socklen_t *, int)
DEFINE_REAL(int, dup, int)
DEFINE_REAL(int, dup2, int, int)
DEFINE_REAL(int, dup3, int, int, int)
DEFINE_REAL(int, close, int)

int pipe(int fds[2])
{
	resolve_pipe();
	int r = REAL(pipe)(fds);
	if (r == 0)
		hg_fd_pair(RA, fds);
	return r;
}

int pipe2(int fds[2], int flags)
{
	resolve_pipe2();
	int r = REAL(pipe2)(fds, flags);
	if (r == 0)
		hg_fd_pair(RA, fds);
	return r;
}

int socketpair(int domain, int type, int proto, int fds[2])
{
	resolve_socketpair();
	int r = REAL(socketpair)(domain, type, proto, fds);
	if (r == 0)
		hg_fd_pair(RA, fds);
	return r;
}

int socket(int domain, int type, int proto)
{
	resolve_socket();
	int fd = REAL(socket)(domain, type, proto);
	hg_fd_set(fd, HG_FD_SOCKETS);
	hg_fd_num_sync(RA, fd, 0);
	return fd;
}

int accept(int s, struct sockaddr *a, socklen_t *n)
{
	resolve_accept();
	int fd = REAL(accept)(s, a, n);
	hg_fd_set(fd, HG_FD_SOCKETS);
	hg_fd_num_sync(RA, fd, 0);
	return fd;
}

int accept4(int s, struct sockaddr *a, socklen_t *n, int flags)
{
	resolve_accept4();
	int fd = REAL(accept4)(s, a, n, flags);
	hg_fd_set(fd, HG_FD_SOCKETS);
	hg_fd_num_sync(RA, fd, 0);
	return fd;
}

int dup(int fd)
{
	resolve_dup();
	int r = REAL(dup)(fd);
	hg_fd_set(r, hg_fd_get(fd));
	hg_fd_num_sync(RA, r, 0);
	return r;
}

/* The runtime's copy of stderr (hg_opts.err_fd, high up) survives the
 * program's closing every descriptor at start, as daemons and test
 * harnesses do: close and close_range leave it open (the program never
 * knew it), and a dup2 onto it moves it out of the way first, so that the
 * reports still get out. */
static int hg_keeps(int fd) { return fd > 2 && fd == hg_opts.err_fd; }

static void hg_err_fd_moves(int to)
{
	if (hg_keeps(to)) {
		int moved = fcntl(to, F_DUPFD_CLOEXEC, 100);
		hg_opts.err_fd = moved >= 0 ? moved : 2;
	}
}

int dup2(int fd, int to)
{
	resolve_dup2();
	hg_err_fd_moves(to);
	int r = REAL(dup2)(fd, to);
	if (r >= 0 && r != fd) {
		hg_fd_set(r, hg_fd_get(fd));
		hg_fd_num_sync(RA, r, 0);
	}
	return r;
}

int dup3(int fd, int to, int flags)
{
	resolve_dup3();
	hg_err_fd_moves(to);
	int r = REAL(dup3)(fd, to, flags);
	if (r >= 0) {
		hg_fd_set(r, hg_fd_get(fd));
		hg_fd_num_sync(RA, r, 0);
	}
	return r;
}

int close(int fd)
{
	resolve_close();
	if (hg_keeps(fd))
		return 0;
	hg_fd_set(fd, 0);
	hg_fd_num_sync(RA, fd, 1);
	return REAL(close)(fd);
}

DEFINE_REAL(int, close_range, unsigned int, unsigned int, int)
int close_range(unsigned int first, unsigned int last, int flags)
{
	resolve_close_range();
	unsigned int keep = (unsigned int)hg_opts.err_fd;
	if (!hg_keeps(hg_opts.err_fd) || keep < first || keep > last)
		return REAL(close_range)(first, last, flags);
	int r = keep > first ? REAL(close_range)(first, keep - 1, flags) : 0;
	if (r == 0 && keep < last)
		r = REAL(close_range)(keep + 1, last, flags);
	return r;
}

DEFINE_REAL(void, closefrom, int)
void closefrom(int low)
{
	resolve_closefrom();
	if (!hg_keeps(hg_opts.err_fd) || hg_opts.err_fd < low) {
		REAL(closefrom)(low);
		return;
	}
	if (close_range((unsigned int)low, ~0u, 0) != 0) { /* a kernel without close_range */
		long max = sysconf(_SC_OPEN_MAX);
		for (int fd = low; fd < max; fd++)
			close(fd);
	}
}

/* ---- writes release, reads that return data acquire ---- */

DEFINE_REAL(ssize_t, write, int, const void *, size_t)
DEFINE_REAL(ssize_t, pwrite, int, const void *, size_t, off_t)
DEFINE_REAL(ssize_t, writev, int, const struct iovec *, int)
DEFINE_REAL(ssize_t, send, int, const void *, size_t, int)
DEFINE_REAL(ssize_t, sendto, int, const void *, size_t, int, const struct sockaddr *, socklen_t)
DEFINE_REAL(ssize_t, sendmsg, int, const struct msghdr *, int)
DEFINE_REAL(ssize_t, read, int, void *, size_t)
DEFINE_REAL(ssize_t, pread, int, void *, size_t, off_t)
DEFINE_REAL(ssize_t, readv, int, const struct iovec *, int)
DEFINE_REAL(ssize_t, recv, int, void *, size_t, int)
DEFINE_REAL(ssize_t, recvfrom, int, void *, size_t, int, struct sockaddr *, socklen_t *)
DEFINE_REAL(ssize_t, recvmsg, int, struct msghdr *, int)

/* FD_WRITE releases on fd's object before the call; FD_READ acquires it
 * after a call that returned data, and hands the thread's buffered events
 * over before the call, which may block for the rest of the run
 * (blocking.c). The rest of the arguments are the real function's. */
#define FD_WRITE(name, fd, ...)                       \
	{                                             \
		resolve_##name();                     \
		hg_fd_release(RA, fd);                \
		return REAL(name)(__VA_ARGS__);       \
	}
#define FD_READ(name, fd, ...)                        \
	{                                             \
		resolve_##name();                     \
		hg_active(RA);                        \
		ssize_t r = REAL(name)(__VA_ARGS__);  \
		hg_fd_acquire(RA, fd, r);             \
		return r;                             \
	}

ssize_t write(int fd, const void *b, size_t n) FD_WRITE(write, fd, fd, b, n)
ssize_t pwrite(int fd, const void *b, size_t n, off_t off) FD_WRITE(pwrite, fd, fd, b, n, off)
ssize_t writev(int fd, const struct iovec *v, int n) FD_WRITE(writev, fd, fd, v, n)
ssize_t send(int fd, const void *b, size_t n, int flags) FD_WRITE(send, fd, fd, b, n, flags)
ssize_t sendto(int fd, const void *b, size_t n, int flags, const struct sockaddr *a, socklen_t al) FD_WRITE(sendto, fd, fd, b, n, flags, a, al)
ssize_t sendmsg(int fd, const struct msghdr *m, int flags) FD_WRITE(sendmsg, fd, fd, m, flags)
ssize_t read(int fd, void *b, size_t n) FD_READ(read, fd, fd, b, n)
ssize_t pread(int fd, void *b, size_t n, off_t off) FD_READ(pread, fd, fd, b, n, off)
ssize_t readv(int fd, const struct iovec *v, int n) FD_READ(readv, fd, fd, v, n)
ssize_t recv(int fd, void *b, size_t n, int flags) FD_READ(recv, fd, fd, b, n, flags)
ssize_t recvfrom(int fd, void *b, size_t n, int flags, struct sockaddr *a, socklen_t *al) FD_READ(recvfrom, fd, fd, b, n, flags, a, al)
ssize_t recvmsg(int fd, struct msghdr *m, int flags) FD_READ(recvmsg, fd, fd, m, flags)

/* ---- futexes ---- */

DEFINE_REAL(long, syscall, long, long, long, long, long, long, long)

/* syscall forwards up to six arguments (the most any system call takes;
 * extra ones are ignored by the kernel). A futex wake releases on the
 * futex word before waking anyone; a wait acquires it when it returns,
 * whether it slept or found the word already changed. */
long syscall(long nr, ...)
{
	resolve_syscall();
	va_list ap;
	va_start(ap, nr);
	long a1 = va_arg(ap, long), a2 = va_arg(ap, long), a3 = va_arg(ap, long);
	long a4 = va_arg(ap, long), a5 = va_arg(ap, long), a6 = va_arg(ap, long);
	va_end(ap);
	if (nr != SYS_futex)
		return REAL(syscall)(nr, a1, a2, a3, a4, a5, a6);
	int cmd = (int)a2 & FUTEX_CMD_MASK;
	int wake = cmd == FUTEX_WAKE || cmd == FUTEX_WAKE_BITSET || cmd == FUTEX_WAKE_OP ||
		   cmd == FUTEX_REQUEUE || cmd == FUTEX_CMP_REQUEUE;
	int wait = cmd == FUTEX_WAIT || cmd == FUTEX_WAIT_BITSET;
	struct hg_thread *t = wake || wait ? hg_active(RA) : NULL;
	if (t && wake)
		GO(t, hg_d_release(t->tid, (GoUint64)a1));
	long r = REAL(syscall)(nr, a1, a2, a3, a4, a5, a6);
	if (t && wait)
		GO(t, hg_d_acquire(t->tid, (GoUint64)a1));
	return r;
}
