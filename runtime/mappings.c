/* mappings.c: interposed mmap, mmap64, mremap, munmap, madvise and
 * mlockall.
 *
 * Memory that a mapping change gives back or (re)maps loses its shadow
 * state: the next mapping at the same address starts as never accessed, so
 * that its first users are not paired with the previous mapping's (another
 * thread's accesses to memory that no longer exists). The reset is
 * shadow.c's, in C (no Go call: these run anywhere, inside signal handlers
 * and glibc's locked sections included). When the program itself makes
 * the call, its thread's buffered accesses go to the Go side before the
 * mapping changes, while the memory is still what they accessed:
 * processed after the reset, they would bring the old accesses back, and
 * until 2026-11-27 they were sent after the call, when another thread
 * could already have mapped the same pages and written them (an
 * outsider's 16 threads that each mapped, wrote a byte and unmapped 64
 * KB: a write reported against another thread's write to the earlier
 * mapping in 3 runs of 200; the first access to memory with no shadow
 * yet waits in the buffer).
 */
#define _GNU_SOURCE
#include "wrap.h"

#include <errno.h>
#include <stdarg.h>
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

/* hg_flush_caller sends the calling thread's buffered accesses to the Go
 * side when the program (code at ra) makes the call. */
static void hg_flush_caller(void *ra)
{
	if (!hg_detect)
		return;
	struct hg_thread *t = hg_link_pc(ra) ? hg_tracked(ra) : NULL;
	if (t)
		hg_flush(t);
}

/* hg_forget resets the shadow of [addr, addr+len) after a successful
 * call. */
static void hg_forget(void *addr, size_t len)
{
	if (addr != MAP_FAILED && hg_detect)
		hg_reset_cells((uint64_t)(uintptr_t)addr, len);
}

DEFINE_REAL(void *, mmap, void *, size_t, int, int, int, off_t)
void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	resolve_mmap();
	hg_flush_caller(RA);
	void *p = REAL(mmap)(addr, len, prot, flags, fd, off);
	hg_forget(p, len);
	return p;
}

DEFINE_REAL(void *, mmap64, void *, size_t, int, int, int, off_t)
void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	resolve_mmap64();
	hg_flush_caller(RA);
	void *p = REAL(mmap64)(addr, len, prot, flags, fd, off);
	hg_forget(p, len);
	return p;
}

DEFINE_REAL(void *, mremap, void *, size_t, size_t, int, void *)
void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
	resolve_mremap();
	void *fixed = NULL;
	if (flags & MREMAP_FIXED) {
		va_list ap;
		va_start(ap, flags);
		fixed = va_arg(ap, void *);
		va_end(ap);
	}
	hg_flush_caller(RA);
	void *p = REAL(mremap)(old, old_len, new_len, flags, fixed);
	if (p != MAP_FAILED) {
		/* the old range is gone; the contents that moved keep no
		 * state (a race across the move goes unseen, none is made up) */
		hg_forget(old, old_len);
		hg_forget(p, new_len);
	}
	return p;
}

DEFINE_REAL(int, munmap, void *, size_t)
int munmap(void *addr, size_t len)
{
	resolve_munmap();
	hg_flush_caller(RA);
	int r = REAL(munmap)(addr, len);
	if (r == 0)
		hg_forget(addr, len);
	return r;
}

/* madvise(DONTNEED, FREE, REMOVE) gives the pages back: they read as zeros
 * (or as the file) afterwards, a fresh start like a new mapping. A pool
 * allocator that returns a slab this way and hands it to another thread
 * is otherwise paired with the slab's earlier users. */
DEFINE_REAL(int, madvise, void *, size_t, int)
int madvise(void *addr, size_t len, int advice)
{
	resolve_madvise();
	hg_flush_caller(RA);
	int r = REAL(madvise)(addr, len, advice);
	if (r == 0 && (advice == MADV_DONTNEED || advice == MADV_FREE || advice == MADV_REMOVE))
		hg_forget(addr, len);
	return r;
}

/* mlockall locks every mapping of the process, the runtime's too: with
 * MCL_CURRENT the kernel faulted in the shadow's reservations (address
 * space reserved without memory), and a rewritten program that called
 * mlockall(MCL_CURRENT) was killed by the OOM killer after 24 GB
 * (2026-11-28); with MCL_FUTURE every later shadow chunk would be
 * faulted in whole. The lock is made on fault instead (MCL_ONFAULT,
 * Linux 4.4): each page the program touches stays in memory from its
 * first touch on, as do the shadow's pages it uses, and nothing is
 * faulted in ahead. What the program loses is MCL_CURRENT's faulting in
 * of what it has mapped already: its first touch of such a page faults
 * once. A kernel without MCL_ONFAULT locks nothing, as ThreadSanitizer
 * does for every mlockall (the call succeeds). Without CAP_IPC_LOCK,
 * MCL_CURRENT fails with ENOMEM where the process's address space is
 * larger than RLIMIT_MEMLOCK, which the runtime's reservations make it;
 * and MCL_FUTURE is not passed on (hg_future_lock_fits): the runtime's
 * later mappings would count against that limit and fail, and the
 * program's own allocations with them (an outsider's unprivileged
 * program: malloc failed with EAGAIN in 8 runs of 10, the Go runtime
 * ran out of memory in the other 2). Its later mappings are not locked
 * then, as under ThreadSanitizer. */
DEFINE_REAL(int, mlockall, int)

/* hg_future_lock_fits: the process may lock memory without limit (an
 * unlimited RLIMIT_MEMLOCK, or CAP_IPC_LOCK in its effective set). */
static int hg_future_lock_fits(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur == RLIM_INFINITY)
		return 1;
	struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
	return syscall(SYS_capget, &hdr, data) == 0 && (data[CAP_TO_INDEX(CAP_IPC_LOCK)].effective & CAP_TO_MASK(CAP_IPC_LOCK));
}

int mlockall(int flags)
{
	resolve_mlockall();
	if (!(flags & (MCL_CURRENT | MCL_FUTURE)) || (flags & ~(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT)))
		return REAL(mlockall)(flags); /* the kernel's answer to such flags */
	int saved = errno;
	if ((flags & MCL_FUTURE) && !hg_future_lock_fits()) {
		errno = saved; /* getrlimit or capget may have failed */
		flags &= ~MCL_FUTURE;
		if (!(flags & MCL_CURRENT))
			return 0;
	}
	int r = REAL(mlockall)(flags | MCL_ONFAULT);
	if (r != 0 && errno == EINVAL && !(flags & ~(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT))) {
		errno = saved; /* no MCL_ONFAULT here */
		return 0;
	}
	return r;
}
