/* shadow.c: the C side's handle on shadow memory outside the fast path:
 * the directory pointer and the side cells' reservation the Go side
 * publishes (package shadow; read by the fast path, fastpath.c) and the
 * reset of a heap block's cells (malloc.c).
 */
#define _GNU_SOURCE
#include "hgrt.h"

#include <errno.h>
#include <sys/mman.h>
#include <sys/sysinfo.h>

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
 * pages of cells in memory, it gives them back (madvise) rather than
 * storing zeros (hg_zero_pages); cells of chunks never touched are zero
 * already. */
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

/* HG_SMALL_RESET: bytes of whole pages of cells (of 4 KB of memory each)
 * below which a reset stores zeros without asking which pages are in
 * memory (a system call) */
#define HG_SMALL_RESET (16 * 4096)

/* hg_zero_stores stores zeros into the cells [lo, hi). */
static void hg_zero_stores(uintptr_t lo, uintptr_t hi)
{
	for (uintptr_t p = lo; p < hi; p += 8)
		__atomic_store_n((uint64_t *)p, 0, __ATOMIC_RELAXED);
}

/* hg_zero_absent zeroes the whole pages [lo, hi) of cells, none of which
 * is in memory, where the kernel would not drop them (hg_drop_pages: the
 * process locked its memory, mlockall). Without swap such a page has
 * never been touched, or was dropped: it reads as zeros already, and a
 * store would fault it in and lock it (a program that locked its memory
 * and freed a 2 GB table it had touched once a megabyte: 8.4 GB resident
 * and 54 s, where it took 0.2 s natively). With swap a page may be out
 * there with cells in it: each word is read, and only those not zero are
 * stored (a page never touched is read through the kernel's zero page). */
static void hg_zero_absent(uintptr_t lo, uintptr_t hi)
{
	struct sysinfo si;
	if (sysinfo(&si) == 0 && si.totalswap == 0)
		return;
	for (uintptr_t p = lo; p < hi; p += 8)
		if (__atomic_load_n((uint64_t *)p, __ATOMIC_RELAXED) != 0)
			__atomic_store_n((uint64_t *)p, 0, __ATOMIC_RELAXED);
}

/* hg_drop_pages gives the whole pages [lo, hi) of cells back to the
 * kernel, which reads them back as zeros; 0 when it would not. */
static int hg_drop_pages(uintptr_t lo, uintptr_t hi)
{
	return hi <= lo || madvise((void *)lo, hi - lo, hg_shadow_shared ? MADV_REMOVE : MADV_DONTNEED) == 0;
}

/* HG_RESIDENT_BATCH: pages asked about per mincore call */
#define HG_RESIDENT_BATCH 512

/* hg_zero_pages zeroes the whole pages [lo, hi) of cells. Pages not in
 * memory (mincore) are dropped, which costs the kernel no TLB flush
 * since none is mapped, and which clears a page swapped out as well as
 * one never touched. Pages in memory take stores, or are dropped too
 * when there are more than give_back bytes of them. A freed block's
 * pages given back that way used to take stores again at the next
 * allocation of the same memory, each a page fault: two threads sharing
 * 256 KB objects (of which they use 4 KB) took 5.6 ms per object, 22 s
 * for 4000 (ThreadSanitizer 3.2 s, native 0.14 s). */
static void hg_zero_pages(uintptr_t lo, uintptr_t hi, uintptr_t give_back)
{
	int saved = errno; /* free and malloc leave it as it was; the calls here may fail (locked pages: mlockall) */
	unsigned char in[HG_RESIDENT_BATCH];
	for (uintptr_t b = lo; b < hi;) {
		uintptr_t e = hi - b > HG_RESIDENT_BATCH * 4096ull ? b + HG_RESIDENT_BATCH * 4096ull : hi;
		if (mincore((void *)b, e - b, in) != 0) {
			if (e - b <= give_back || !hg_drop_pages(b, e))
				hg_zero_stores(b, e);
			b = e;
			continue;
		}
		uintptr_t resident = 0;
		for (uintptr_t p = b; p < e; p += 4096)
			resident += in[(p - b) >> 12] & 1;
		if (resident * 4096 > give_back && hg_drop_pages(b, e)) {
			b = e;
			continue;
		}
		/* runs of pages alike: stores into those in memory, the rest dropped */
		for (uintptr_t p = b; p < e;) {
			int r = in[(p - b) >> 12] & 1;
			uintptr_t q = p + 4096;
			while (q < e && (in[(q - b) >> 12] & 1) == r)
				q += 4096;
			if (r)
				hg_zero_stores(p, q);
			else if (!hg_drop_pages(p, q))
				hg_zero_absent(p, q);
			p = q;
		}
		b = e;
	}
	errno = saved;
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
			if (phi >= plo + HG_SMALL_RESET) {
				hg_zero_stores(lo, plo);
				hg_zero_pages(plo, phi, give_back);
				hg_zero_stores(phi, hi);
			} else {
				hg_zero_stores(lo, hi);
			}
		}
		g = stop + 1;
	}
}
