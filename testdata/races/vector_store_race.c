/* verdict: race
 * racy: vec_pair
 * expect-exit: 0
 */
/* One thread stores a 16-byte vector into vec_pair again and again; the
 * other writes the pair's second half with a plain 8-byte store, with no
 * lock and no other ordering between them: a write-write race on the
 * pair's upper 8 bytes in every schedule. The vector thread's accesses
 * are whole-granule 16-byte stores, the kind the fast path settles in C
 * for the thread that owns the cells. vec_count is the vector thread's
 * alone, and vec_tally the scalar thread's; the empty asm statements keep
 * the compiler from merging the loops' stores into one. */
#define _GNU_SOURCE
#include <emmintrin.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

__m128i vec_pair;
long vec_count, vec_tally;

static void *vector_writer(void *arg)
{
    (void)arg;
    for (int i = 0; i < 4000; i++) {
        _mm_store_si128(&vec_pair, _mm_set_epi64x(i, -i));
        __asm__ volatile("" ::: "memory"); /* one store per iteration */
        vec_count++;
    }
    return NULL;
}

static void *scalar_writer(void *arg)
{
    (void)arg;
    for (int i = 0; i < 4000; i++) {
        ((int64_t *)&vec_pair)[1] = i;
        __asm__ volatile("" ::: "memory");
        vec_tally++;
    }
    return NULL;
}

int main(void)
{
    pthread_t a, b;
    pthread_create(&a, NULL, vector_writer, NULL);
    pthread_create(&b, NULL, scalar_writer, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("vector_store_race: %ld %ld\n", vec_count, vec_tally);
    return 0;
}
