/* expect-exit: 0 */
/* Large switch statements that gcc lowers to jump tables: dense 0..20,
 * sparse values, switch on char, nested switch and switch inside a loop.
 * Cases compute distinct expressions so they cannot become value tables. */
#include <stdio.h>

static volatile int sink;

__attribute__((noinline)) static long dense(int x, long y)
{
    switch (x) {
    case 0: return y + 1; case 1: return y * 3;
    case 2: return y - 7; case 3: return y ^ 0x55;
    case 4: return y << 2; case 5: return y >> 1;
    case 6: return y * y; case 7: return y % 11;
    case 8: return ~y; case 9: return y + x * 100;
    case 10: return y & 0xf0; case 11: return y | 0x101;
    case 12: return -y; case 13: return y * 7 + 3;
    case 14: return y / 3; case 15: return y + 1000;
    case 16: sink = (int)y; return 16; case 17: return (y << 4) - y;
    case 18: return y * 9 - 2; case 19: return y + (y >> 3);
    case 20: return y - 20 * x;
    default: return -1;
    }
}

__attribute__((noinline)) static int sparse(int x)
{
    switch (x) {
    case 3: return x * 2;
    case 17: return x + 5;
    case 100: return x - 1;
    case 1000: return x / 10;
    case 4096: return x >> 4;
    case 65535: return x & 0xff;
    case -5: return x * x;
    case 123456: return x % 1000;
    default: return 0;
    }
}

__attribute__((noinline)) static int on_char(char c, int acc)
{
    switch (c) {
    case 'a': return acc + 1; case 'b': return acc * 2;
    case 'c': return acc - 3; case 'd': return acc ^ 4;
    case 'e': return acc + 'e'; case 'f': return acc << 1;
    case 'g': return acc >> 1; case 'h': return acc * 3 + 1;
    case 'i': return acc - 'i'; case 'j': return acc | 16;
    case 'k': return acc & ~16; case 'l': return acc + 100;
    case ' ': return acc;
    default: return acc + 1000;
    }
}

__attribute__((noinline)) static int nested(int a, int b)
{
    switch (a) {
    case 0:
        switch (b) {
        case 0: return 1;
        case 1: return a + b + 10;
        case 2: return b * 20;
        case 3: return b - 30;
        case 4: return b + 40;
        case 5: return b * b;
        case 6: return 66 - b;
        default: return -10;
        }
    case 1: return a * 1000 + b;
    case 2:
        switch (b) {
        case 0: return 200;
        case 1: return 201 * b;
        case 2: return 202 + b;
        case 3: return 203 - b;
        case 4: return 204 ^ b;
        case 5: return 205 | b;
        default: return -20;
        }
    case 3: return a - b;
    case 4: return a * b;
    case 5: return a + b * 5;
    default: return -99;
    }
}

__attribute__((noinline)) static long interp(const unsigned char *code, int n)
{
    long acc = 0, reg = 1;
    for (int pc = 0; pc < n; pc++) {
        switch (code[pc] % 12) {
        case 0: acc += reg; break;
        case 1: reg *= 2; break;
        case 2: acc -= pc; break;
        case 3: reg = reg + acc % 5; break;
        case 4: acc ^= 0x5a5a; break;
        case 5: acc = acc * 3 + 1; break;
        case 6: reg--; break;
        case 7: acc += code[pc]; break;
        case 8: reg = (reg << 3) % 1000; break;
        case 9: acc = acc / 2; break;
        case 10: acc += reg * pc; break;
        case 11: reg = 1; break;
        }
    }
    return acc * 31 + reg;
}

int main(void)
{
    long dsum = 0;
    for (int x = -2; x <= 22; x++) {
        long r = dense(x, 12345 + x);
        dsum += r;
        printf("dense(%d) = %ld\n", x, r);
    }
    printf("dense sum = %ld\n", dsum);

    static const int sp[] = { 3, 17, 100, 1000, 4096, 65535, -5, 123456, 0, 4, 99999 };
    for (unsigned i = 0; i < sizeof sp / sizeof sp[0]; i++)
        printf("sparse(%d) = %d\n", sp[i], sparse(sp[i]));

    const char *text = "a big face, hijacked lake; jigs hack!";
    int acc = 7;
    for (const char *p = text; *p; p++)
        acc = on_char(*p, acc);
    printf("on_char over \"%s\" = %d\n", text, acc);

    int nsum = 0;
    for (int a = -1; a <= 6; a++) {
        for (int b = 0; b <= 7; b++) {
            int r = nested(a, b);
            nsum += r * (a + 2) + b;
            printf("%5d", r);
        }
        printf("\n");
    }
    printf("nested checksum = %d\n", nsum);

    unsigned char code[200];
    unsigned s = 12345;
    for (int i = 0; i < 200; i++) {
        s = s * 1103515245u + 12345u;
        code[i] = (unsigned char)(s >> 16);
    }
    printf("interp = %ld\n", interp(code, 200));
    printf("sink = %d\n", sink);
    return 0;
}
