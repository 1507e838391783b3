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

/* hg_reset_range zeroes the shadow cells of a range, without calling into
 * Go (malloc, free and the mapping calls run inside glibc's locked
 * sections, and inside signal handlers). Past give_back bytes of whole
 * pages of cells, it gives them back (madvise) rather than storing zeros;
 * cells of chunks never touched are zero already. */
static void hg_reset_range(uint64_t addr, uint64_t size, uintptr_t give_back);

/* hg_reset_cells resets the cells of memory that a mapping change gives
 * back or maps anew (mappings.c): their pages go back past 16, since the
 * memory may never be used again, or only in part, and stores would fault
 * its cells in. */
void hg_reset_cells(uint64_t addr, uint64_t size)
{
	hg_reset_range(addr, size, 16 * 4096);
}

/* hg_reset_heap_cells resets the cells of a heap block that is allocated
 * or released (malloc.c): their pages go back only past 1 MB of them. A
 * page given back faults in again at its next use, and the madvise
 * interrupts the process's other threads to flush their TLBs: a program
 * that allocates and frees arrays of a few hundred kilobytes in a loop
 * paid that at every malloc and free (pigz -11, whose zopfli does: with 16
 * pages, the limit for heap blocks too until 2026-11-27, its system time
 * was 2.0 s of 12.2, and 0.25 s with 256 pages; 12.25 -> 10.9 s in all,
 * peak memory 23 -> 27 MB; zstd -T4 113 -> 119 MB, the bench's programs
 * unchanged). */
void hg_reset_heap_cells(uint64_t addr, uint64_t size)
{
	hg_reset_range(addr, size, 256 * 4096);
}

static void hg_reset_range(uint64_t addr, uint64_t size, uintptr_t give_back)
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
			if (phi > plo + give_back && madvise((void *)plo, phi - plo, hg_shadow_shared ? MADV_REMOVE : MADV_DONTNEED) == 0) {
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
