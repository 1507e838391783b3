/* shadow.c: the C side's handle on shadow memory outside the fast path:
 * the directory pointer and the side cells' reservation the Go side
 * publishes (package shadow; read by the fast path, fastpath.c) and the
 * reset of a heap block's cells (malloc.c).
 */
#define _GNU_SOURCE
#include "hgrt.h"

#include <sys/mman.h>

uintptr_t *hg_shadow_dir;
int hg_shadow_shared;

uintptr_t hg_split_base;

void hg_set_shadow_dir(uintptr_t dir)
{
	__atomic_store_n(&hg_shadow_dir, (uintptr_t *)dir, __ATOMIC_RELEASE);
}

void hg_set_split_base(uintptr_t base)
{
	__atomic_store_n(&hg_split_base, base, __ATOMIC_RELEASE);
}

/* hg_reset_cells zeroes the shadow cells of a range (a heap block that is
 * allocated or released), without calling into Go: malloc and free are
 * called from inside glibc with its locks held (for example the thread
 * stack cache while a thread exits), and a Go call there can deadlock when
 * the Go scheduler needs a new thread. Whole pages of cells are given back
 * with madvise; cells of chunks never touched are zero already. */
/* HG_RESET_MADVISE: past this many bytes of whole pages of cells, a
 * reset gives them back (madvise) rather than storing zeros. The pages
 * fault in again at their next use, one by one, and the call interrupts
 * the process's other threads to flush their TLBs: a program that
 * allocates and frees arrays of a few hundred kilobytes in a loop paid
 * that at every malloc and free (pigz -11, whose zopfli does: with 16
 * pages, the limit until 2026-11-27, its system time was 2.0 s of 12.2,
 * and 0.25 s with 256; 12.25 -> 10.9 s in all, peak memory 23 -> 27 MB;
 * zstd -T4 113 -> 119 MB, the bench's programs unchanged). */
#define HG_RESET_MADVISE (256 * 4096)

void hg_reset_cells(uint64_t addr, uint64_t size)
{
	uintptr_t *dir = __atomic_load_n(&hg_shadow_dir, __ATOMIC_ACQUIRE);
	if (!dir || size == 0 || addr >= SH_MAX_ADDR)
		return;
	if (addr + size > SH_MAX_ADDR || addr + size < addr)
		size = SH_MAX_ADDR - addr;
	uint64_t g = addr >> SH_GRANULE_SHIFT, last = (addr + size - 1) >> SH_GRANULE_SHIFT;
	while (g <= last) {
		uint64_t chunk_end = g | (SH_GRANULES_PER_CHUNK - 1); /* last granule of this chunk */
		uint64_t stop = chunk_end < last ? chunk_end : last;
		uintptr_t chunk = __atomic_load_n(&dir[(g << SH_GRANULE_SHIFT) >> SH_CHUNK_SHIFT], __ATOMIC_ACQUIRE);
		if (chunk) {
			uintptr_t lo = chunk + (g & (SH_GRANULES_PER_CHUNK - 1)) * SH_CELL_BYTES;
			uintptr_t hi = chunk + ((stop & (SH_GRANULES_PER_CHUNK - 1)) + 1) * SH_CELL_BYTES;
			uintptr_t plo = (lo + 4095) & ~(uintptr_t)4095, phi = hi & ~(uintptr_t)4095;
			if (phi > plo + HG_RESET_MADVISE && madvise((void *)plo, phi - plo, hg_shadow_shared ? MADV_REMOVE : MADV_DONTNEED) == 0) {
				for (uintptr_t p = lo; p < plo; p += 8)
					__atomic_store_n((uint64_t *)p, 0, __ATOMIC_RELAXED);
				for (uintptr_t p = phi; p < hi; p += 8)
					__atomic_store_n((uint64_t *)p, 0, __ATOMIC_RELAXED);
			} else {
				for (uintptr_t p = lo; p < hi; p += 8)
					__atomic_store_n((uint64_t *)p, 0, __ATOMIC_RELAXED);
			}
		}
		g = stop + 1;
	}
}
