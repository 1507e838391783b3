/* verdict: race
 * racy: packed_flags
 * expect-exit: 0
 */
/* The counter-example to adjacent_struct_fields.c: two threads write
 * *different* bit-fields of packed_flags, but adjacent bit-fields form one
 * memory location in C11 (each write is a read-modify-write of the shared
 * byte), so the writes race in every run. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

struct flags { unsigned low : 4; unsigned high : 4; } packed_flags;

static void *set_low(void *arg)
{
    (void)arg;
    for (int i = 0; i < 100; i++)
        packed_flags.low = (unsigned)i & 0xf;
    return NULL;
}

static void *set_high(void *arg)
{
    (void)arg;
    for (int i = 0; i < 100; i++)
        packed_flags.high = (unsigned)(i + 3) & 0xf;
    return NULL;
}

int main(void)
{
    pthread_t a, b;
    pthread_create(&a, NULL, set_low, NULL);
    pthread_create(&b, NULL, set_high, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    puts("adjacent_bitfields_race: done");
    return 0;
}
