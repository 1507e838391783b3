/* expect-exit: 0 */
/* SIMD and string-instruction coverage: loops gcc vectorises at -O2,
 * explicit SSE2 intrinsics, an AVX2 path selected at run time with
 * __builtin_cpu_supports (scalar fallback prints identical output),
 * rep movsb / rep stosb via inline asm, and lock xadd / __atomic_fetch_add
 * on globals. All checksums are integer-exact. */
#include <emmintrin.h>
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define N 1024

static float fa[N] __attribute__((aligned(32))), fb[N] __attribute__((aligned(32))), fc[N] __attribute__((aligned(32)));
static int ia[N] __attribute__((aligned(32))), ib[N] __attribute__((aligned(32))), ic[N] __attribute__((aligned(32)));
static unsigned char src[4096], dst[4096];
static long g_counter;
static int g_xadd;

__attribute__((noinline)) static void vec_float_add(float *restrict c, const float *restrict a,
                                                    const float *restrict b, int n)
{
    for (int i = 0; i < n; i++)
        c[i] = a[i] * 2.0f + b[i];
}

__attribute__((noinline)) static void vec_int_add(int *restrict c, const int *restrict a,
                                                  const int *restrict b, int n)
{
    for (int i = 0; i < n; i++)
        c[i] = a[i] + b[i] * 3;
}

__attribute__((noinline)) static void copy_loop(unsigned char *restrict d, const unsigned char *restrict s, int n)
{
    for (int i = 0; i < n; i++)
        d[i] = s[i] ^ 0x5a;
}

__attribute__((noinline)) static long int_sum(const int *a, int n)
{
    long s = 0;
    for (int i = 0; i < n; i++)
        s += a[i];
    return s;
}

__attribute__((noinline)) static uint32_t sse2_checksum(const int *a, int n)
{
    __m128i acc = _mm_setzero_si128();
    __m128i mix = _mm_set1_epi32(0x01000193);
    for (int i = 0; i + 4 <= n; i += 4) {
        __m128i v = _mm_loadu_si128((const __m128i *)(a + i));
        acc = _mm_add_epi32(acc, _mm_xor_si128(v, mix));
        acc = _mm_add_epi32(acc, _mm_slli_epi32(acc, 1));
    }
    uint32_t lanes[4];
    _mm_storeu_si128((__m128i *)lanes, acc);
    __m128 f = _mm_mul_ps(_mm_load_ps(fa), _mm_set1_ps(4.0f)); /* exact: small ints * 4 */
    float fl[4];
    _mm_storeu_ps(fl, f);
    return lanes[0] ^ (lanes[1] * 3) ^ (lanes[2] * 5) ^ (lanes[3] * 7) ^ (uint32_t)(fl[0] + fl[1] + fl[2] + fl[3]);
}

__attribute__((target("avx2"), noinline)) static uint32_t avx2_dot(const int *a, const int *b, int n)
{
    __m256i acc = _mm256_setzero_si256();
    for (int i = 0; i + 8 <= n; i += 8) {
        __m256i x = _mm256_load_si256((const __m256i *)(a + i));
        __m256i y = _mm256_loadu_si256((const __m256i *)(b + i));
        acc = _mm256_add_epi32(acc, _mm256_mullo_epi32(x, y));
    }
    uint32_t lanes[8], s = 0;
    _mm256_storeu_si256((__m256i *)lanes, acc);
    for (int k = 0; k < 8; k++)
        s += lanes[k];
    return s;
}

__attribute__((noinline)) static uint32_t scalar_dot(const int *a, const int *b, int n)
{
    uint32_t s = 0;
    for (int i = 0; i < n; i++)
        s += (uint32_t)a[i] * (uint32_t)b[i];
    return s;
}

static void rep_movsb(void *d, const void *s, size_t n)
{
    asm volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
}

static void rep_stosb(void *d, unsigned char v, size_t n)
{
    asm volatile("rep stosb" : "+D"(d), "+c"(n) : "a"(v) : "memory");
}

static int lock_xadd(int *p, int v)
{
    asm volatile("lock xaddl %0, %1" : "+r"(v), "+m"(*p) : : "memory");
    return v; /* old value */
}

int main(void)
{
    for (int i = 0; i < N; i++) {
        fa[i] = (float)(i % 97);
        fb[i] = (float)(i % 13) * 0.5f;
        ia[i] = i * 7 - 300;
        ib[i] = (i * 13) % 101;
    }
    for (int i = 0; i < 4096; i++) src[i] = (unsigned char)(i * 31 + 7);

    vec_float_add(fc, fa, fb, N);
    double fsum = 0;
    for (int i = 0; i < N; i++) fsum += fc[i];
    printf("float add checksum: %.1f fc[5]=%.2f fc[1000]=%.2f\n", fsum, fc[5], fc[1000]);

    vec_int_add(ic, ia, ib, N);
    printf("int add sum: %ld ic[17]=%d\n", int_sum(ic, N), ic[17]);

    copy_loop(dst, src, 4096);
    long bsum = 0;
    for (int i = 0; i < 4096; i++) bsum += dst[i] * (i & 7);
    printf("xor copy sum: %ld\n", bsum);

    printf("sse2 checksum: %08x\n", sse2_checksum(ia, N));

    __builtin_cpu_init();
    uint32_t dot = __builtin_cpu_supports("avx2") ? avx2_dot(ia, ib, N) : scalar_dot(ia, ib, N);
    printf("dot product: %u (matches scalar: %s)\n", dot, dot == scalar_dot(ia, ib, N) ? "yes" : "no");

    memset(dst, 0, sizeof dst);
    rep_movsb(dst + 3, src + 1, 3000);
    rep_stosb(dst + 100, 0xab, 500);
    unsigned long h = 0;
    for (int i = 0; i < 4096; i++) h = h * 131 + dst[i];
    printf("rep movsb/stosb hash: %016lx dst[3]=%u dst[100]=%u dst[3002]=%u dst[3003]=%u\n", h, dst[3],
           dst[100], dst[3002], dst[3003]);

    int olds = 0;
    for (int i = 0; i < 1000; i++) {
        __atomic_fetch_add(&g_counter, i, __ATOMIC_SEQ_CST);
        olds += lock_xadd(&g_xadd, 3) & 1;
    }
    long prev = __atomic_fetch_add(&g_counter, 1, __ATOMIC_RELAXED);
    printf("atomics: counter=%ld prev=%ld xadd=%d odd-olds=%d\n", g_counter, prev, g_xadd, olds);
    return 0;
}
