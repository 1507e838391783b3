/* verdict: race-free
 * needs: lib
 * expect-exit: 0
 */
/* A producer fills heap frames with 16-byte SSE stores and copies of a
 * 16-byte header struct (gcc moves those with one vector move each), and
 * passes each frame to a consumer through a mutex-guarded ring; the
 * consumer reads the frame with 16-byte loads, rewrites it in place the
 * same way and frees it. Every frame changes owner once, through the lock:
 * vector accesses of whole granules on either side of a hand-off. */
#define _GNU_SOURCE
#include <emmintrin.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define FRAMES 2000
#define WORDS 32 /* 16-byte vectors per frame */
#define RING 8

struct header {
    uint64_t seq, len;
} __attribute__((aligned(16)));

struct frame {
    struct header hdr;
    __m128i data[WORDS];
};

static struct frame *ring[RING];
static int ring_head, ring_count;
static pthread_mutex_t ring_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ring_cv = PTHREAD_COND_INITIALIZER;
static uint64_t consumed_sum;

static void ring_put(struct frame *f)
{
    pthread_mutex_lock(&ring_mu);
    while (ring_count == RING)
        pthread_cond_wait(&ring_cv, &ring_mu);
    ring[(ring_head + ring_count++) % RING] = f;
    pthread_cond_broadcast(&ring_cv);
    pthread_mutex_unlock(&ring_mu);
}

static struct frame *ring_take(void)
{
    pthread_mutex_lock(&ring_mu);
    while (ring_count == 0)
        pthread_cond_wait(&ring_cv, &ring_mu);
    struct frame *f = ring[ring_head];
    ring_head = (ring_head + 1) % RING;
    ring_count--;
    pthread_cond_broadcast(&ring_cv);
    pthread_mutex_unlock(&ring_mu);
    return f;
}

static void *producer(void *arg)
{
    (void)arg;
    for (uint64_t i = 0; i < FRAMES; i++) {
        struct frame *f = aligned_alloc(16, sizeof *f);
        struct header h = {i, WORDS};
        f->hdr = h;
        for (int w = 0; w < WORDS; w++)
            _mm_store_si128(&f->data[w], _mm_set_epi64x((long long)i, w));
        ring_put(f);
    }
    return NULL;
}

static void *consumer(void *arg)
{
    (void)arg;
    uint64_t sum = 0;
    for (int i = 0; i < FRAMES; i++) {
        struct frame *f = ring_take();
        struct header h = f->hdr;
        __m128i acc = _mm_setzero_si128();
        for (uint64_t w = 0; w < h.len; w++) {
            __m128i v = _mm_load_si128(&f->data[w]);
            acc = _mm_add_epi64(acc, v);
            _mm_store_si128(&f->data[w], _mm_add_epi64(v, v));
        }
        uint64_t lanes[2];
        _mm_storeu_si128((__m128i *)lanes, acc);
        sum += lanes[0] + lanes[1] + h.seq;
        free(f);
    }
    consumed_sum = sum;
    return NULL;
}

int main(void)
{
    pthread_t p, c;
    pthread_create(&p, NULL, producer, NULL);
    pthread_create(&c, NULL, consumer, NULL);
    pthread_join(p, NULL);
    pthread_join(c, NULL);
    printf("vector_blocks_handoff: %llu\n", (unsigned long long)consumed_sum);
    return 0;
}
