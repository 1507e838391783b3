/* expect-exit: 0 */
/* Function pointers: dispatch tables, qsort/bsearch comparators, function
 * pointers inside structs, static functions reachable only via pointers,
 * and tail-recursive / mutually tail-calling functions (jmp at -O2). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef long (*binop)(long, long);

static long op_add(long a, long b) { return a + b; }
static long op_sub(long a, long b) { return a - b; }
static long op_mul(long a, long b) { return a * b; }
static long op_div(long a, long b) { return b ? a / b : 0; }
static long op_mod(long a, long b) { return b ? a % b : 0; }
static long op_xor(long a, long b) { return a ^ b; }

static const binop table[] = { op_add, op_sub, op_mul, op_div, op_mod, op_xor };
static const char *const names[] = { "add", "sub", "mul", "div", "mod", "xor" };

struct shape {
    const char *name;
    int w, h;
    long (*area)(const struct shape *);
    void (*scale)(struct shape *, int);
};

static long rect_area(const struct shape *s) { return (long)s->w * s->h; }
static long tri_area(const struct shape *s) { return (long)s->w * s->h / 2; }
static void scale_both(struct shape *s, int k) { s->w *= k; s->h *= k; }
static void scale_w(struct shape *s, int k) { s->w *= k; }

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}
static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int cmp_shape_area(const void *a, const void *b)
{
    const struct shape *x = a, *y = b;
    long ax = x->area(x), ay = y->area(y);
    return (ax > ay) - (ax < ay);
}

/* tail calls */
__attribute__((noinline)) static long sum_to(long n, long acc)
{
    if (n == 0)
        return acc;
    return sum_to(n - 1, acc + n);
}

__attribute__((noinline)) static int is_odd(unsigned n);
__attribute__((noinline)) static int is_even(unsigned n) { return n == 0 ? 1 : is_odd(n - 1); }
__attribute__((noinline)) static int is_odd(unsigned n) { return n == 0 ? 0 : is_even(n - 1); }

__attribute__((noinline)) static long apply_n(binop f, long x, long y, int n)
{
    if (n == 0)
        return x;
    return apply_n(f, f(x, y), y, n - 1);
}

/* indirect tail call through the table: jmp *table(,%rdi,8) at -O2 */
__attribute__((noinline)) static long dispatch(int k, long a, long b)
{
    return table[k % 6](a, b);
}

static void for_each(int *a, int n, void (*cb)(int *, void *), void *ctx)
{
    for (int i = 0; i < n; i++)
        cb(&a[i], ctx);
}

static void cb_accumulate(int *v, void *ctx) { *(long *)ctx += *v; }
static void cb_square(int *v, void *ctx) { (void)ctx; *v = *v * *v; }

int main(int argc, char **argv)
{
    (void)argv;
    for (int i = 0; i < 6; i++)
        printf("%s(%d, 7) = %ld\n", names[i], 100 + argc, table[i](100 + argc, 7));

    long chain = 1;
    for (int i = 0; i < 30; i++)
        chain = table[i % 6](chain, i + 2) % 100003;
    printf("chained ops = %ld\n", chain);

    int nums[40];
    unsigned s = 42;
    for (int i = 0; i < 40; i++) {
        s = s * 1664525u + 1013904223u;
        nums[i] = (int)(s >> 20) - 2048;
    }
    qsort(nums, 40, sizeof nums[0], cmp_int);
    printf("sorted ints: first=%d median=%d last=%d\n", nums[0], nums[20], nums[39]);
    for (int k = 0; k < 3; k++) {
        int key = nums[k * 13];
        int *hit = bsearch(&key, nums, 40, sizeof nums[0], cmp_int);
        printf("bsearch(%d) found=%d\n", key, hit != NULL && *hit == key);
    }
    int missing = 5000;
    printf("bsearch(%d) found=%d\n", missing,
           bsearch(&missing, nums, 40, sizeof nums[0], cmp_int) != NULL);

    const char *words[] = { "pear", "apple", "fig", "banana", "kiwi", "cherry", "date" };
    qsort(words, 7, sizeof words[0], cmp_str);
    printf("sorted words:");
    for (int i = 0; i < 7; i++)
        printf(" %s", words[i]);
    printf("\n");

    struct shape shapes[4] = {
        { "rectA", 3, 4, rect_area, scale_both },
        { "triB", 10, 3, tri_area, scale_w },
        { "rectC", 1, 2, rect_area, scale_w },
        { "triD", 6, 6, tri_area, scale_both },
    };
    for (int i = 0; i < 4; i++)
        shapes[i].scale(&shapes[i], i + 1);
    qsort(shapes, 4, sizeof shapes[0], cmp_shape_area);
    for (int i = 0; i < 4; i++)
        printf("shape %s %dx%d area=%ld\n", shapes[i].name, shapes[i].w, shapes[i].h,
               shapes[i].area(&shapes[i]));

    printf("sum_to(20000) = %ld\n", sum_to(20000, 0));
    printf("is_even(20001) = %d, is_odd(17777) = %d\n", is_even(20001), is_odd(17777));
    printf("apply_n(mul by 3, 20 times) = %ld\n", apply_n(op_mul, 1, 3, 20));
    printf("apply_n(sub 5, 1000 times) = %ld\n", apply_n(op_sub, 0, 5, 1000));

    long d = 0;
    for (int k = 0; k < 12; k++)
        d += dispatch(k, 1000 + k, k + 1);
    printf("dispatch sum = %ld\n", d);

    int arr[10];
    for (int i = 0; i < 10; i++)
        arr[i] = i + 1;
    long total = 0;
    for_each(arr, 10, cb_square, NULL);
    for_each(arr, 10, cb_accumulate, &total);
    printf("sum of squares 1..10 = %ld\n", total);
    return 0;
}
