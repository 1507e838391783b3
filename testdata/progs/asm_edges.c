/* expect-exit: 0 */
/* asm_edges.c: instruction forms the patcher must relocate exactly.
 * Each function is written in inline assembly so that the compiler cannot
 * change the instruction under test: loop/jrcxz (no rel32 form), indirect
 * calls through rsp-relative and RIP-relative memory, RIP-relative operands
 * followed by an immediate, short basic blocks that need islands, xchg and
 * cmpxchg16b on memory, rep movsb/stosb, and a backwards (std) movsb.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

long g_counter;
long g_table[4] = {10, 20, 30, 40};
static unsigned char g_src[64], g_dst[64];
static volatile unsigned __int128 g_pair;

static long add_one(long x) { return x + 1; }
long (*g_fn)(long) = add_one;

/* loop: counts down rcx, adding the table entry each time. */
__attribute__((noinline)) static long sum_loop(long n)
{
	long acc = 0;
	__asm__ volatile("mov %1, %%rcx\n"
			 "lea g_table(%%rip), %%rdx\n"
			 "test %%rcx, %%rcx\n"
			 "jz 2f\n"
			 "1: add -8(%%rdx,%%rcx,8), %0\n"
			 "loop 1b\n"
			 "2:\n"
			 : "+r"(acc)
			 : "r"(n)
			 : "rcx", "rdx", "cc", "memory");
	return acc;
}

/* jrcxz in a short block with a memory access in front of it. */
__attribute__((noinline)) static long jrcxz_test(long n)
{
	long r = 0;
	__asm__ volatile("mov %1, %%rcx\n"
			 "mov g_counter(%%rip), %0\n"
			 "jrcxz 1f\n"
			 "add $100, %0\n"
			 "1:\n"
			 : "=&r"(r)
			 : "r"(n)
			 : "rcx", "cc", "memory");
	return r;
}

/* call through a function pointer stored on the stack and in a global. */
__attribute__((noinline)) static long indirect_calls(long x)
{
	long r;
	__asm__ volatile("sub $24, %%rsp\n"
			 "mov g_fn(%%rip), %%rax\n"
			 "mov %%rax, 8(%%rsp)\n"
			 "mov %1, %%rdi\n"
			 "call *8(%%rsp)\n"
			 "mov %%rax, %%rdi\n"
			 "call *g_fn(%%rip)\n"
			 "add $24, %%rsp\n"
			 "mov %%rax, %0\n"
			 : "=r"(r)
			 : "r"(x)
			 : "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "cc", "memory");
	return r;
}

/* RIP-relative operands followed by immediates, and a 3-byte block. */
__attribute__((noinline)) static long rip_imm(void)
{
	long r;
	__asm__ volatile("addq $7, g_counter(%%rip)\n"
			 "cmpq $1000, g_counter(%%rip)\n"
			 "jg 1f\n"
			 "movl $3, g_table+4(%%rip)\n"
			 "1: mov (%%rsp), %%rax\n" /* rsp-based: not instrumented, still relocated */
			 "mov g_counter(%%rip), %0\n"
			 : "=r"(r)
			 :
			 : "rax", "cc", "memory");
	return r;
}

/* A 3-byte basic block with an access (label 1 up to label 2, both branch
 * targets): too short for a 5-byte jump, so it needs an island. */
__attribute__((noinline)) static long short_blocks(long *p, long n)
{
	long r = 0;
	__asm__ volatile("xor %0, %0\n"
			 "jmp 2f\n"
			 "1: add (%1), %0\n"
			 "2: dec %2\n"
			 "jns 1b\n"
			 : "+&r"(r), "+r"(p), "+r"(n)
			 :
			 : "cc", "memory");
	return r;
}

__attribute__((noinline)) static long atomics(void)
{
	long v = 5;
	__asm__ volatile("xchg %0, g_counter(%%rip)" : "+r"(v) : : "memory");
	uint64_t lo = 0, hi = 0;
	__asm__ volatile("lock cmpxchg16b %0"
			 : "+m"(g_pair), "+a"(lo), "+d"(hi)
			 : "b"((uint64_t)11), "c"((uint64_t)22)
			 : "cc");
	return v + (long)(uint64_t)g_pair + (long)(uint64_t)(g_pair >> 64);
}

__attribute__((noinline)) static unsigned strings(void)
{
	for (int i = 0; i < 64; i++)
		g_src[i] = (unsigned char)(i * 3);
	void *d = g_dst, *s = g_src;
	size_t n = 64;
	__asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
	d = g_dst + 8;
	n = 8;
	__asm__ volatile("rep stosb" : "+D"(d), "+c"(n) : "a"(0x5a) : "memory");
	/* backwards copy of 16 bytes with the direction flag set */
	d = g_dst + 63;
	s = g_src + 15;
	n = 16;
	__asm__ volatile("std\n rep movsb\n cld" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
	unsigned sum = 0;
	for (int i = 0; i < 64; i++)
		sum = sum * 31 + g_dst[i];
	return sum;
}

int main(void)
{
	long arr[3] = {1, 2, 3};
	printf("sum_loop(4) = %ld\n", sum_loop(4));
	printf("sum_loop(0) = %ld\n", sum_loop(0));
	g_counter = 9;
	printf("jrcxz(0) = %ld, jrcxz(1) = %ld\n", jrcxz_test(0), jrcxz_test(1));
	printf("indirect_calls(40) = %ld\n", indirect_calls(40));
	printf("rip_imm = %ld, table[0] = %ld\n", rip_imm(), g_table[0]);
	printf("short_blocks = %ld\n", short_blocks(arr, 3));
	printf("atomics = %ld, counter = %ld\n", atomics(), g_counter);
	printf("strings = %u\n", strings());
	return 0;
}
