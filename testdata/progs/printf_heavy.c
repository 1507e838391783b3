/* expect-exit: 0 */
/* Heavy stdio formatting (printf/snprintf with many conversions, widths,
 * precisions, flags), string.h functions and libm math. Link with -lm.
 * Produces ~200 lines. No %p (addresses are not reproducible). */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

static volatile double vseed = 1.25; /* volatile: prevents constant folding of libm calls */

static void section(const char *name)
{
    static int n;
    printf("== %d: %-12s ==\n", ++n, name);
}

int main(void)
{
    char buf[256], buf2[256];
    section("integers");
    for (int i = 0; i < 30; i++) {
        int v = (i * 7919) % 2003 - 1000;
        long long big = (long long)v * 1000000007LL;
        printf("%3d|%6d|%-6d|%+d|%06d|%x|%X|%#o|%lld|%*d|%-*d|\n", i, v, v, v, v,
               (unsigned)v & 0xffff, (unsigned)(v * 31) & 0xfffff, (unsigned)i * 9, big,
               i % 10 + 1, i, 8, -i);
    }
    section("sizes");
    size_t sizes[] = { 0, 1, sizeof(int), sizeof(long double), 4096, (size_t)1 << 40 };
    for (unsigned i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        printf("size[%u]=%zu hex=%zx ptrdiff=%td\n", i, sizes[i], sizes[i], (ptrdiff_t)i - 3);
    section("chars/strings");
    const char *words[] = { "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta" };
    for (int i = 0; i < 8; i++)
        printf("[%c][%10s][%-10s][%.3s][%*.*s]\n", words[i][0], words[i], words[i], words[i], 8, i % 5,
               words[i]);
    section("floats");
    double x = vseed;
    for (int i = 0; i < 30; i++) {
        double y = x * (i + 1) - 3.0;
        printf("%2d f=%.4f e=%.6e g=%g G=%.10G w=%12.3f l=%-10.2f| sq=%.9f sin=%.9f\n", i, y, y * 1e5,
               y / 7.0, y * 1e-7, y, y, sqrt(fabs(y)), sin(y));
    }
    section("math");
    for (int i = 1; i <= 25; i++) {
        double t = vseed * i / 10.0;
        printf("t=%.3f cos=%.8f exp=%.8e log=%.8f pow=%.6f atan2=%.8f floor=%.0f ceil=%.0f\n", t,
               cos(t), exp(t), log(t), pow(t, 1.5), atan2(t, 1.0 - t), floor(t * 3), ceil(t * 3));
    }
    section("snprintf");
    for (int i = 0; i < 20; i++) {
        int n = snprintf(buf, sizeof buf, "item-%03d:%s:%.2f", i, words[i % 8], i * 0.25);
        int m = snprintf(buf2, 12, "%s", buf); /* truncated */
        printf("%-30s n=%d m=%d trunc=\"%s\"\n", buf, n, m, buf2);
    }
    section("strcpy/strcat");
    strcpy(buf, "start");
    for (int i = 0; i < 15; i++) {
        strcat(buf, "-");
        strcat(buf, words[i % 8]);
        if (strlen(buf) > 150)
            strcpy(buf, words[i % 8]);
        printf("len=%3zu cmp=%+d buf=%s\n", strlen(buf), (strcmp(buf, "m") > 0) - (strcmp(buf, "m") < 0), buf);
    }
    section("memcpy/memmove/memset");
    for (int i = 0; i < 26; i++)
        buf[i] = (char)('a' + i);
    buf[26] = '\0';
    for (int i = 0; i < 12; i++) {
        memmove(buf + 1, buf, 25);
        buf[0] = (char)('A' + i);
        memcpy(buf2, buf, 27);
        memset(buf2 + 20, '#', (size_t)(i % 6));
        printf("move=%s copy=%s\n", buf, buf2);
    }
    section("strtok/strchr");
    strcpy(buf, "the quick,brown fox;jumps  over,,the lazy dog;and keeps running");
    int tok = 0;
    for (char *t = strtok(buf, " ,;"); t; t = strtok(NULL, " ,;")) {
        const char *o = strchr(t, 'o');
        printf("tok %2d: %-8s len=%zu first-o-at=%td\n", tok++, t, strlen(t), o ? o - t : (ptrdiff_t)-1);
    }
    section("misc");
    for (int i = 0; i < 30; i++) {
        unsigned long long u = 0x9e3779b97f4a7c15ULL * (unsigned long long)(i + 1);
        printf("%2d u=%llu hex=%016llx short=%hd uchar=%hhu pct=%d%%\n", i, u, u, (short)u,
               (unsigned char)u, (int)(u % 101));
    }
    return 0;
}
