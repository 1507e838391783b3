/* verdict: race-free
 * needs: lib
 * expect-exit: 0
 */
/* A reorder stage holds its scheduler lock while it pushes finished blocks
 * onto the writer's queue under the queue's own lock (lbzip2 and many
 * pipelines nest locks this way); the writer takes only the queue lock,
 * pops a block, writes it out and frees it without any lock. The queue
 * lock hands each block over: the writer reads the queue head that the
 * stage wrote under that lock. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct block {
    struct block *next;
    int seq;
    unsigned char bytes[40];
};

static pthread_mutex_t sched_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t queue_mu = PTHREAD_MUTEX_INITIALIZER;
static struct block *out_head, *out_tail;
static int stage_done;
static int blocks_scheduled;
static unsigned long written_sum;

__attribute__((noinline)) static struct block *finish_block(int seq)
{
    struct block *b = malloc(sizeof *b);
    if (!b)
        abort();
    b->next = NULL;
    b->seq = seq;
    for (int i = 0; i < 40; i++)
        b->bytes[i] = (unsigned char)(seq + i);
    return b;
}

static void *reorder_stage(void *arg)
{
    (void)arg;
    for (int seq = 0; seq < 200; seq++) {
        struct block *b = finish_block(seq);
        pthread_mutex_lock(&sched_mu);
        blocks_scheduled++;
        pthread_mutex_lock(&queue_mu);
        if (out_tail)
            out_tail->next = b;
        else
            out_head = b;
        out_tail = b;
        pthread_mutex_unlock(&queue_mu);
        pthread_mutex_unlock(&sched_mu);
    }
    pthread_mutex_lock(&queue_mu);
    stage_done = 1;
    pthread_mutex_unlock(&queue_mu);
    return NULL;
}

static void *writer(void *arg)
{
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&queue_mu);
        struct block *b = out_head;
        if (b) {
            out_head = b->next;
            if (!out_head)
                out_tail = NULL;
        }
        int done = stage_done;
        pthread_mutex_unlock(&queue_mu);
        if (!b) {
            if (done)
                break;
            sched_yield();
            continue;
        }
        for (int i = 0; i < 40; i++)
            written_sum += b->bytes[i];
        free(b);
    }
    return NULL;
}

int main(void)
{
    pthread_t s, w;
    pthread_create(&s, NULL, reorder_stage, NULL);
    pthread_create(&w, NULL, writer, NULL);
    pthread_join(s, NULL);
    pthread_join(w, NULL);
    printf("nested_lock_queue_handoff: %lu %d\n", written_sum, blocks_scheduled);
    return 0;
}
