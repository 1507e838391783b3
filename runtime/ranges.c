/* ranges.c: the address ranges of the loaded objects, which the wrappers
 * and the Go side decide by: is a return address in this library (calls the
 * runtime's own Go code makes pass straight through the wrappers), and is
 * it in the main program (its link-time address, for reports and the
 * allocation sites of heap blocks). Each range is looked up once, with
 * dl_iterate_phdr, on first use.
 */
#define _GNU_SOURCE
#include "rt_internal.h"

#include <link.h>
#include <stddef.h>
#include <stdint.h>

/* ---- is the caller this library? ---- */

static uintptr_t hg_lib_lo, hg_lib_hi;

/* hg_load_span gives the address range an object's loadable segments
 * span, counting only segments with all of the permission flags need. */
static void hg_load_span(struct dl_phdr_info *info, uint32_t need, uintptr_t *lo, uintptr_t *hi)
{
	*lo = UINTPTR_MAX, *hi = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		if (p->p_type != PT_LOAD || (p->p_flags & need) != need)
			continue;
		uintptr_t a = info->dlpi_addr + p->p_vaddr;
		if (a < *lo)
			*lo = a;
		if (a + p->p_memsz > *hi)
			*hi = a + p->p_memsz;
	}
}

static int hg_lib_range(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	uintptr_t self = (uintptr_t)data;
	uintptr_t lo, hi;
	hg_load_span(info, 0, &lo, &hi);
	if (self >= lo && self < hi) {
		hg_lib_lo = lo;
		__atomic_store_n(&hg_lib_hi, hi, __ATOMIC_RELEASE);
		return 1;
	}
	return 0;
}

/* hg_from_runtime tells whether ra is code of this library. */
int hg_from_runtime(void *ra)
{
	if (__atomic_load_n(&hg_lib_hi, __ATOMIC_ACQUIRE) == 0)
		hg_walk_objects(hg_lib_range, (void *)(uintptr_t)&hg_lib_range);
	uintptr_t a = (uintptr_t)ra;
	return a >= hg_lib_lo && a < hg_lib_hi;
}

/* ---- is the caller the main program? ---- */

static uintptr_t hg_main_lo, hg_main_hi, hg_main_bias;

static int hg_main_range(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	uintptr_t lo, hi;
	hg_load_span(info, PF_X, &lo, &hi);
	hg_main_lo = lo;
	hg_main_bias = info->dlpi_addr;
	__atomic_store_n(&hg_main_hi, hi, __ATOMIC_RELEASE);
	return 1; /* the main program only */
}

/* hg_link_pc turns a return address into the main program's link-time
 * address when it lies in the main program, else 0. */
uint64_t hg_link_pc(void *ra)
{
	if (__atomic_load_n(&hg_main_hi, __ATOMIC_ACQUIRE) == 0)
		hg_walk_objects(hg_main_range, NULL);
	uintptr_t a = (uintptr_t)ra;
	return a >= hg_main_lo && a < hg_main_hi ? a - hg_main_bias : 0;
}

/* hg_call_pc is where a call whose return address is ra was made, as
 * reports name code: the main program's link-time address of the call
 * instruction's last byte (ra - 1), which the line table gives the call's
 * line (ra itself may be the next line's first instruction); 0 unless ra
 * is in the main program. Every pc the C side derives from a return
 * address (allocation sites, frees, string functions' accesses) is this
 * one; the Go side applies the same - 1 to the return addresses of the
 * stacks it is given (runtime/detect: reporter.frames, callPC). */
uint64_t hg_call_pc(void *ra)
{
	uint64_t pc = hg_link_pc(ra);
	return pc ? pc - 1 : 0;
}

/* ---- the same for addresses held as integers (the Go side) ---- */

int hg_in_runtime(uint64_t addr)
{
	return hg_from_runtime((void *)(uintptr_t)addr);
}

uint64_t hg_link_pc_addr(uint64_t ra)
{
	return hg_link_pc((void *)(uintptr_t)ra);
}

/* ---- the spans themselves (a forked child tells its detector process) ---- */

void hg_main_span(uint64_t *lo, uint64_t *hi)
{
	hg_link_pc(NULL); /* looks the span up */
	*lo = hg_main_lo;
	*hi = hg_main_hi;
}

void hg_runtime_span(uint64_t *lo, uint64_t *hi)
{
	hg_from_runtime(NULL);
	*lo = hg_lib_lo;
	*hi = hg_lib_hi;
}
