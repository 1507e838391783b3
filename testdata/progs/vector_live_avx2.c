/* expect-exit: 0 */
/* AVX2 without AVX-512 (the runtime then keeps ymm0-15 and mxcsr alone
 * across its calls): inline asm loads a pattern into all sixteen ymm
 * registers, does a lock xadd on a counter another thread increments
 * too (a call into the detector), and stores them back; a memset between
 * rounds leaves glibc's vector state behind. Without AVX2 the program
 * only counts, and prints the same. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define ROUNDS 20000

static long avx_counter;

static void *other(void *arg)
{
    for (int i = 0; i < ROUNDS; i++)
        __atomic_fetch_add(&avx_counter, 1, __ATOMIC_SEQ_CST);
    return arg;
}

#define LD(n) "vmovdqu " #n "*32(%[pat]), %%ymm" #n "\n\t"
#define ST(n) "vmovdqu %%ymm" #n ", " #n "*32(%[out])\n\t"
#define ALL(m) m(0) m(1) m(2) m(3) m(4) m(5) m(6) m(7) m(8) m(9) m(10) m(11) m(12) m(13) m(14) m(15)

__attribute__((target("avx2"), noinline)) static int one_round(const unsigned char *pat, unsigned char *out)
{
    long one = 1;
    __asm__ volatile(ALL(LD) "lock xaddq %[one], %[ctr]\n\t" ALL(ST) "vzeroupper\n\t"
                     : [ctr] "+m"(avx_counter), [one] "+r"(one)
                     : [pat] "r"(pat), [out] "r"(out)
                     : "memory", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9",
                       "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
    return !memcmp(out, pat, 512);
}

int main(void)
{
    __builtin_cpu_init();
    int avx2 = __builtin_cpu_supports("avx2");
    pthread_t t;
    pthread_create(&t, NULL, other, NULL);
    static unsigned char pat[512], out[512], scratch[512];
    for (int i = 0; i < 512; i++)
        pat[i] = (unsigned char)(i * 11 + 1);
    int bad = 0;
    for (int r = 0; r < ROUNDS; r++) {
        if (avx2)
            bad += !one_round(pat, out);
        else
            __atomic_fetch_add(&avx_counter, 1, __ATOMIC_SEQ_CST);
        if (r % 500 == 0)
            memset(scratch, r & 0xff, sizeof scratch);
    }
    pthread_join(t, NULL);
    printf("vector_live_avx2: %d rounds, %d with registers lost, counter %ld\n", ROUNDS, bad,
           __atomic_load_n(&avx_counter, __ATOMIC_SEQ_CST));
    return 0;
}
