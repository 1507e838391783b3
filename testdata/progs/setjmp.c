/* expect-exit: 0 */
/* setjmp/longjmp through several stack frames: from a nested callee,
 * repeatedly in a loop, with volatile locals whose values must survive,
 * and with two independent jump buffers. Prints a trace. */
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

static jmp_buf outer_env;
static jmp_buf inner_env;
static int trace[64];
static int ntrace;

static void log_step(int v)
{
    if (ntrace < 64)
        trace[ntrace++] = v;
}

__attribute__((noinline)) static void depth3(int x)
{
    char scratch[64];
    memset(scratch, x & 0x7f, sizeof scratch);
    log_step(300 + x);
    if (x % 3 == 0)
        longjmp(outer_env, x + 1); /* skip depth2 and depth1 */
    if (x % 3 == 1)
        longjmp(inner_env, 1000 + scratch[5]);
}

__attribute__((noinline)) static int depth2(int x)
{
    volatile int local = x * 2;
    log_step(200 + x);
    depth3(x);
    return local + 1;
}

__attribute__((noinline)) static int depth1(int x)
{
    int r;
    int j = setjmp(inner_env);
    if (j != 0) {
        log_step(j);
        printf("  depth1(%d): inner longjmp returned %d\n", x, j);
        return -j;
    }
    log_step(100 + x);
    r = depth2(x);
    printf("  depth1(%d): normal return %d\n", x, r);
    return r;
}

static int recurse_and_jump(int n)
{
    if (n < 0)
        return -1000; /* never reached; keeps the recursion well-founded */
    if (n == 0)
        longjmp(outer_env, 77);
    return recurse_and_jump(n - 1) + 1;
}

int main(void)
{
    volatile int total = 0;
    volatile int jumps = 0;

    for (volatile int i = 0; i < 6; i++) {
        int v = setjmp(outer_env);
        if (v == 0) {
            int r = depth1(i);
            total += r;
            printf("iter %d: depth1 -> %d\n", (int)i, r);
        } else {
            jumps++;
            total += v * 10;
            printf("iter %d: outer longjmp value %d\n", (int)i, v);
        }
    }

    /* longjmp(env, 0) must make setjmp return 1 */
    volatile int zero_case = 0;
    if (setjmp(outer_env) == 0) {
        longjmp(outer_env, 0);
    } else {
        zero_case = 1;
    }
    printf("longjmp with 0 returned nonzero: %d\n", zero_case);

    /* deep recursion unwound by a single longjmp */
    volatile int deep = 0;
    int dv = setjmp(outer_env);
    if (dv == 0) {
        deep = recurse_and_jump(50);
        printf("unexpected return %d\n", deep);
    } else {
        deep = dv;
    }
    printf("deep recursion jump value: %d\n", deep);

    printf("total=%d jumps=%d\n", (int)total, (int)jumps);
    printf("trace (%d):", ntrace);
    for (int k = 0; k < ntrace; k++)
        printf(" %d", trace[k]);
    printf("\n");
    return 0;
}
