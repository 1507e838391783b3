/* verdict: race-free
 * expect-exit: 0
 */
/* Four threads each write a different member of the global struct
 * field_stats (a char, a short, an int and a long, packed next to each
 * other). Distinct non-bit-field members are distinct memory locations in
 * C11 and compilers may not widen the stores, so there is no race. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

struct stats { char tag; short code; int count; long total; } field_stats;

static void *set_tag(void *arg)   { (void)arg; for (int i = 0; i < 1000; i++) field_stats.tag = (char)('A' + i % 26); return NULL; }
static void *set_code(void *arg)  { (void)arg; for (int i = 0; i < 1000; i++) field_stats.code = (short)(i * 3); return NULL; }
static void *set_count(void *arg) { (void)arg; for (int i = 0; i < 1000; i++) field_stats.count += 2; return NULL; }
static void *set_total(void *arg) { (void)arg; for (int i = 0; i < 1000; i++) field_stats.total += i; return NULL; }

int main(void)
{
    pthread_t t[4];
    pthread_create(&t[0], NULL, set_tag, NULL);
    pthread_create(&t[1], NULL, set_code, NULL);
    pthread_create(&t[2], NULL, set_count, NULL);
    pthread_create(&t[3], NULL, set_total, NULL);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    printf("adjacent_struct_fields: %c %d %d %ld\n", field_stats.tag, field_stats.code,
           field_stats.count, field_stats.total);
    return 0;
}
