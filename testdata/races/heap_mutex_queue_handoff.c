/* verdict: race-free
 * needs: lib
 * expect-exit: 0
 */
/* The producer allocates job blocks with make_job, fills them, and pushes
 * them on a mutex-protected singly linked queue; the consumer pops each
 * block under the same mutex, reads and rewrites it, and frees it. The
 * queue mutex orders the producer's initialisation before the consumer's
 * use; no lock is held while the block itself is accessed. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#define JOBS 100
struct job { struct job *next; int id; int payload[6]; };

struct job *queue_head, *queue_tail;
int queue_closed;
pthread_mutex_t queue_mu = PTHREAD_MUTEX_INITIALIZER;
long handoff_sum;

__attribute__((noinline)) static struct job *make_job(void)
{
    struct job *j = malloc(sizeof *j);
    if (!j)
        abort();
    return j;
}

static void *producer(void *arg)
{
    (void)arg;
    for (int id = 0; id < JOBS; id++) {
        struct job *j = make_job();
        j->next = NULL;
        j->id = id;
        for (int i = 0; i < 6; i++)
            j->payload[i] = id + i;
        pthread_mutex_lock(&queue_mu);
        if (queue_tail)
            queue_tail->next = j;
        else
            queue_head = j;
        queue_tail = j;
        pthread_mutex_unlock(&queue_mu);
    }
    pthread_mutex_lock(&queue_mu);
    queue_closed = 1;
    pthread_mutex_unlock(&queue_mu);
    return NULL;
}

static void *consumer(void *arg)
{
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&queue_mu);
        struct job *j = queue_head;
        if (j) {
            queue_head = j->next;
            if (!queue_head)
                queue_tail = NULL;
        }
        int closed = queue_closed;
        pthread_mutex_unlock(&queue_mu);
        if (!j) {
            if (closed)
                break;
            sched_yield();
            continue;
        }
        for (int i = 0; i < 6; i++) {
            handoff_sum += j->payload[i];
            j->payload[i] = 0;
        }
        free(j);
    }
    return NULL;
}

int main(void)
{
    pthread_t p, c;
    pthread_create(&p, NULL, producer, NULL);
    pthread_create(&c, NULL, consumer, NULL);
    pthread_join(p, NULL);
    pthread_join(c, NULL);
    printf("heap_mutex_queue_handoff: %ld\n", handoff_sum);
    return 0;
}
