/* loader.c: program code that runs while the dynamic loader's lock is
 * held.
 *
 * It owns the wrapper of dl_iterate_phdr, whose callback runs with the
 * loader's write lock held. A call into Go made there can deadlock the
 * process: the Go runtime may need to start a thread for it, its
 * pthread_create waits for the loader's TLS lock, and a dlopen in another
 * thread holds that lock while it waits for the walker's (seen with 6
 * copies of testdata/progs/dl_walk_while_loading.c at once and
 * GOMAXPROCS=8: 5 runs of 360 hung). So the callback runs as a signal
 * handler does: the thread counts as inside the runtime (in_rt), its
 * accesses there are not checked and the wrappers it calls track
 * nothing. Events buffered before the call stay buffered for the next
 * flush. Every caller of the wrapper is treated so: the caller is not
 * asked for (hg_tracked would walk the objects again). The runtime's own
 * walks take the real function (hg_walk_objects).
 *
 * dlopen and dlclose run libraries' constructors and destructors under
 * the loader's lock too, but they are not wrapped: dlopen looks a
 * relative name up in its caller's RUNPATH, which a wrapper would
 * change. Libraries are not rewritten; only the wrappers they call can
 * reach Go there.
 */
#define _GNU_SOURCE
#include "wrap.h"

#include <link.h>

typedef int (*hg_phdr_cb)(struct dl_phdr_info *, size_t, void *);

DEFINE_REAL(int, dl_iterate_phdr, hg_phdr_cb, void *)
int dl_iterate_phdr(hg_phdr_cb cb, void *data)
{
	struct hg_thread *t = hg_bufferable();
	if (!t)
		return hg_walk_objects(cb, data);
	t->in_rt = 1;
	int r = hg_walk_objects(cb, data);
	t->in_rt = 0;
	return r;
}

/* hg_walk_objects: the runtime's own walks (ranges.c, start.c) do not
 * go through the wrapper, which registers the calling thread: a
 * registration maps the thread's buffers with mmap, whose wrapper asks
 * hg_link_pc whether the program made the call, and hg_link_pc's first
 * call walks the objects. A Go runtime thread whose first mmap (the Go
 * runtime maps its heap through cgo's mmap, which is ours) came before
 * anything had looked the main program's range up recursed so until its
 * stack ran out (a SIGSEGV in a verdict test under `make test`, once,
 * after the Go side's start began to resize its scheduler). Their
 * callbacks call nothing wrapped and nothing of Go's. */
int hg_walk_objects(hg_phdr_cb cb, void *data)
{
	resolve_dl_iterate_phdr();
	return REAL(dl_iterate_phdr)(cb, data);
}
