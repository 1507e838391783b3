/* loops.c: run-time support for the loops the rewriter found (package
 * loops). It owns the set of spin variables (hg_spin_*), the set of
 * mutexes used with condition variables (hg_cvm_*), and a load that cannot
 * fault (hg_safe_load), and which mutex each condition variable is
 * waited with (hg_cvm_wait).
 *
 * A spinning-read loop's condition loads are acquires (after the load) and
 * the stores the rewriter could match to them statically are releases
 * (before the store). A spin variable reached through a pointer has no
 * static counterpart store: its address is noted here when the spinning
 * load runs, and from then on a plain store to it counts as the
 * counterpart write (fastpath.c). A store made before the first spinning
 * load is not recognised this way; see docs/detector.md. The table is
 * small, lock-free and never shrinks except when a heap block holding spin
 * variables is released. */
#define _GNU_SOURCE
#include "hgrt.h"

#include <sys/syscall.h>
#include <sys/uio.h>

/* An address set: a small lock-free open-addressing table that never
 * grows. 0 marks a free slot, 1 a forgotten entry (it keeps probe chains
 * intact and may be reused). */
#define HG_SET_SLOTS 256 /* 1 << 8: hg_set_hash */

struct hg_addr_set {
	uint64_t slots[HG_SET_SLOTS];
};

static inline uint32_t hg_set_hash(uint64_t a)
{
	return (uint32_t)hg_hash(a >> 2, 8);
}

/* hg_set_add adds a (not 0 or 1); it returns 0 when the set is full. */
__attribute__((target("general-regs-only"))) static int hg_set_add(struct hg_addr_set *set, uint64_t a)
{
	uint32_t h = hg_set_hash(a);
	for (int i = 0; i < HG_SET_SLOTS; i++) {
		uint64_t *s = &set->slots[(h + i) & (HG_SET_SLOTS - 1)];
		uint64_t v = __atomic_load_n(s, __ATOMIC_ACQUIRE);
		if (v == a)
			return 1;
		if ((v == 0 || v == 1) &&
		    (__atomic_compare_exchange_n(s, &v, a, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED) || v == a))
			return 1;
	}
	return 0;
}

__attribute__((target("general-regs-only"))) static inline int hg_set_has(struct hg_addr_set *set, uint64_t a)
{
	uint32_t h = hg_set_hash(a);
	for (int i = 0; i < HG_SET_SLOTS; i++) {
		uint64_t v = __atomic_load_n(&set->slots[(h + i) & (HG_SET_SLOTS - 1)], __ATOMIC_ACQUIRE);
		if (v == a)
			return 1;
		if (v == 0)
			return 0;
	}
	return 0;
}

static struct hg_addr_set hg_spin_vars;
int hg_spin_used;

__attribute__((target("general-regs-only"))) void hg_spin_note(uint64_t addr)
{
	/* when full, the variable is handled by its static counterparts only */
	if (addr > 1 && hg_set_add(&hg_spin_vars, addr))
		__atomic_store_n(&hg_spin_used, 1, __ATOMIC_RELEASE);
}

/* hg_spin_is tells whether a store to [addr, addr+size) writes a spin
 * variable. Spin variables are looked up by the store's start address. */
__attribute__((no_caller_saved_registers, target("general-regs-only"))) int hg_spin_is(uint64_t addr, uint64_t size)
{
	(void)size;
	return hg_set_has(&hg_spin_vars, addr);
}

/* hg_spin_forget drops the spin variables inside a released heap block
 * (slot value 1 keeps probe chains intact). */
__attribute__((target("general-regs-only"))) void hg_spin_forget(uint64_t addr, uint64_t size)
{
	if (!__atomic_load_n(&hg_spin_used, __ATOMIC_ACQUIRE))
		return;
	for (int i = 0; i < HG_SET_SLOTS; i++) {
		uint64_t v = __atomic_load_n(&hg_spin_vars.slots[i], __ATOMIC_ACQUIRE);
		if (v > 1 && v >= addr && v - addr < size)
			__atomic_compare_exchange_n(&hg_spin_vars.slots[i], &v, 1, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
	}
}

/* hg_safe_load reads 8 bytes at addr through process_vm_readv on the
 * process itself, which fails with EFAULT instead of faulting: a wait
 * loop's condition-variable pointer is read at the loop exit even when the
 * loop body, which reads it too, never ran. Raw system calls: this runs on
 * the trampolines' path, where only general registers may be touched. */
__attribute__((target("general-regs-only"))) uint64_t hg_safe_load(uint64_t addr)
{
	uint64_t v = 0;
	struct iovec local = {&v, sizeof v}, remote = {(void *)(uintptr_t)addr, sizeof v};
	long pid;
	__asm__ volatile("syscall" : "=a"(pid) : "a"((long)SYS_getpid) : "rcx", "r11", "memory");
	long r;
	register long r10 __asm__("r10") = (long)&remote;
	register long r8 __asm__("r8") = 1;
	register long r9 __asm__("r9") = 0;
	__asm__ volatile("syscall"
			 : "=a"(r)
			 : "a"((long)SYS_process_vm_readv), "D"(pid), "S"(&local), "d"(1L), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return r == (long)sizeof v ? v : 0;
}

/* Mutexes used with condition variables: passed to a condition wait, or
 * held when a wait loop is left. A region of such a mutex that wrote
 * memory is handed to the Go side at its unlock (wrappers.c), so that its
 * writes become write/read relations before another thread can take the
 * mutex. The table is small and never shrinks; when it is full, further
 * mutexes are not recognised (their regions' relations are made later). */
static struct hg_addr_set hg_cv_mutexes;

__attribute__((target("general-regs-only"))) void hg_cvm_note(uint64_t m)
{
	if (m > 1)
		hg_set_add(&hg_cv_mutexes, m);
}

int hg_cvm_is(uint64_t m)
{
	return hg_set_has(&hg_cv_mutexes, m);
}

/* Which mutex a condition variable's waiters use: the last one a wait
 * named, as m ^ hash(c) in c's slot (a slot another variable took reads
 * as another mutex; an empty slot, as any). Written before the waiter
 * releases the mutex in the wait, so a signaller that holds it reads it
 * (wrappers.c, hg_signal). */
#define HG_CV_SLOTS 1024
static uint64_t hg_cv_mutex[HG_CV_SLOTS];

static uint64_t hg_cv_hash(uint64_t c) { return c * HG_PHI64; } /* the top 10 bits index, the rest tags */

void hg_cvm_wait(uint64_t c, uint64_t m)
{
	hg_cvm_note(m);
	uint64_t h = hg_cv_hash(c);
	__atomic_store_n(&hg_cv_mutex[h >> 54], m ^ h, __ATOMIC_RELAXED);
}

int hg_cvm_waited_with(uint64_t c, uint64_t m)
{
	uint64_t h = hg_cv_hash(c), v = __atomic_load_n(&hg_cv_mutex[h >> 54], __ATOMIC_RELAXED);
	return m != 0 && (v == 0 || (v ^ h) == m);
}
