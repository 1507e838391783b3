/* expect-exit: 0 */
/* SSE only (no VEX instruction anywhere in the program, so the runtime
 * keeps xmm0-15 and mxcsr alone across its calls): inline asm loads a
 * pattern into all sixteen xmm registers, does a lock xadd on a counter
 * another thread increments too (a call into the detector), and stores
 * them back; the rounding mode is set to round-down around it, and a
 * memset between rounds leaves glibc's vector state behind. */
#include <fenv.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define ROUNDS 20000

static long sse_counter;

static void *other(void *arg)
{
    for (int i = 0; i < ROUNDS; i++)
        __atomic_fetch_add(&sse_counter, 1, __ATOMIC_SEQ_CST);
    return arg;
}

#define LD(n) "movdqu " #n "*16(%[pat]), %%xmm" #n "\n\t"
#define ST(n) "movdqu %%xmm" #n ", " #n "*16(%[out])\n\t"
#define ALL(m) m(0) m(1) m(2) m(3) m(4) m(5) m(6) m(7) m(8) m(9) m(10) m(11) m(12) m(13) m(14) m(15)

__attribute__((noinline)) static int one_round(const unsigned char *pat, unsigned char *out)
{
    long one = 1;
    __asm__ volatile(ALL(LD) "lock xaddq %[one], %[ctr]\n\t" ALL(ST)
                     : [ctr] "+m"(sse_counter), [one] "+r"(one)
                     : [pat] "r"(pat), [out] "r"(out)
                     : "memory", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9",
                       "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
    return !memcmp(out, pat, 256);
}

int main(void)
{
    pthread_t t;
    pthread_create(&t, NULL, other, NULL);
    unsigned char pat[256], out[256], scratch[512];
    for (int i = 0; i < 256; i++)
        pat[i] = (unsigned char)(i * 13 + 5);
    int bad = 0, mode = 0;
    fesetround(FE_DOWNWARD);
    for (int r = 0; r < ROUNDS; r++) {
        bad += !one_round(pat, out);
        mode += fegetround() != FE_DOWNWARD;
        if (r % 500 == 0)
            memset(scratch, r & 0xff, sizeof scratch);
    }
    fesetround(FE_TONEAREST);
    pthread_join(t, NULL);
    printf("vector_live_sse: %d rounds, %d with registers lost, %d with the rounding mode lost, counter %ld\n", ROUNDS,
           bad, mode, __atomic_load_n(&sse_counter, __ATOMIC_SEQ_CST));
    return 0;
}
