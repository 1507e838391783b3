/* expect-exit: 0 */
/* Vector registers live across locked instructions, which call into
 * the detector (its Go side uses vector registers, and so do glibc's
 * string functions it may call): inline asm loads a pattern into xmm2,
 * ymm1 and, where the processor has AVX-512, zmm3 and zmm16, does a
 * lock xadd on a counter another thread increments too, and stores the
 * registers back. A memset/memcpy between rounds leaves glibc's own
 * vector state behind. The output is the same with or without AVX-512. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define ROUNDS 20000

static long shared_counter;

static void *other(void *arg)
{
    for (int i = 0; i < ROUNDS; i++)
        __atomic_fetch_add(&shared_counter, 1, __ATOMIC_SEQ_CST);
    return arg;
}

/* one round with xmm and ymm registers live: 1 if they survived */
__attribute__((target("avx2"), noinline)) static int round_avx2(const unsigned char *pat, unsigned char *out)
{
    long one = 1;
    __asm__ volatile("vmovdqu (%[pat]), %%ymm1\n\t"
                     "movdqu 16(%[pat]), %%xmm2\n\t"
                     "lock xaddq %[one], %[ctr]\n\t"
                     "vmovdqu %%ymm1, (%[out])\n\t"
                     "movdqu %%xmm2, 32(%[out])\n\t"
                     "vzeroupper\n\t"
                     : [ctr] "+m"(shared_counter), [one] "+r"(one)
                     : [pat] "r"(pat), [out] "r"(out)
                     : "memory", "xmm1", "xmm2");
    return !memcmp(out, pat, 32) && !memcmp(out + 32, pat + 16, 16);
}

/* the same with zmm3 and zmm16 live too */
__attribute__((target("avx512f"), noinline)) static int round_avx512(const unsigned char *pat, unsigned char *out)
{
    long one = 1;
    __asm__ volatile("vmovdqu64 (%[pat]), %%zmm16\n\t"
                     "vmovdqu64 (%[pat]), %%zmm3\n\t"
                     "vmovdqu (%[pat]), %%ymm1\n\t"
                     "movdqu 16(%[pat]), %%xmm2\n\t"
                     "lock xaddq %[one], %[ctr]\n\t"
                     "vmovdqu %%ymm1, (%[out])\n\t"
                     "movdqu %%xmm2, 32(%[out])\n\t"
                     "vmovdqu64 %%zmm16, 64(%[out])\n\t"
                     "vmovdqu64 %%zmm3, 128(%[out])\n\t"
                     "vzeroupper\n\t"
                     : [ctr] "+m"(shared_counter), [one] "+r"(one)
                     : [pat] "r"(pat), [out] "r"(out)
                     : "memory", "xmm1", "xmm2", "xmm3", "xmm16");
    return !memcmp(out, pat, 32) && !memcmp(out + 32, pat + 16, 16) && !memcmp(out + 64, pat, 64) &&
           !memcmp(out + 128, pat, 64);
}

int main(void)
{
    __builtin_cpu_init();
    int avx2 = __builtin_cpu_supports("avx2"), avx512 = __builtin_cpu_supports("avx512f");
    pthread_t t;
    pthread_create(&t, NULL, other, NULL);
    unsigned char pat[64], out[192], scratch[512];
    for (int i = 0; i < 64; i++)
        pat[i] = (unsigned char)(i * 7 + 3);
    int bad = 0, done = 0;
    for (int r = 0; r < ROUNDS && avx2; r++, done++) {
        bad += !(avx512 ? round_avx512(pat, out) : round_avx2(pat, out));
        if (r % 500 == 0) {
            memset(scratch, r & 0xff, sizeof scratch);
            memcpy(out, scratch, sizeof out);
        }
    }
    if (!avx2)
        for (int r = 0; r < ROUNDS; r++, done++)
            __atomic_fetch_add(&shared_counter, 1, __ATOMIC_SEQ_CST);
    pthread_join(t, NULL);
    printf("vector_live_atomics: %d rounds, %d with registers lost, counter %ld\n", done, bad,
           __atomic_load_n(&shared_counter, __ATOMIC_SEQ_CST));
    return 0;
}
