/* verdict: race-free
 * figure: dissertation fig. 6.7
 * needs: lib, cv
 * expect-exit: 0
 */
/* Fig. 6.7, a task queue: main creates the consumers first and the
 * producer last. The producer allocates tasks (make_task), fills them,
 * enqueues them under q_mu and signals q_cv once per task; idle consumers
 * block on q_cv. Each consumer takes a task under q_mu, processes it
 * outside the lock (reads the producer's input, writes its own slot of
 * task_output) and frees it. Many signals are sent while no consumer waits
 * (lost signals), and which consumer a signal wakes is arbitrary, so the
 * hand-off of each task has to be attributed through the queue state. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NCONS 3
#define NTASKS 60

struct task { struct task *next; int id; int input[4]; };

struct task *q_head, *q_tail;
int q_shutdown;
pthread_mutex_t q_mu = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t q_cv = PTHREAD_COND_INITIALIZER;
int task_output[NTASKS];

__attribute__((noinline)) static struct task *make_task(void)
{
    struct task *t = malloc(sizeof *t);
    if (!t)
        abort();
    return t;
}

static void *producer(void *arg)
{
    (void)arg;
    for (int id = 0; id < NTASKS; id++) {
        struct task *t = make_task();
        t->next = NULL;
        t->id = id;
        for (int i = 0; i < 4; i++)
            t->input[i] = id + i;
        pthread_mutex_lock(&q_mu);
        if (q_tail)
            q_tail->next = t;
        else
            q_head = t;
        q_tail = t;
        pthread_cond_signal(&q_cv);
        pthread_mutex_unlock(&q_mu);
    }
    pthread_mutex_lock(&q_mu);
    q_shutdown = 1;
    pthread_cond_broadcast(&q_cv);
    pthread_mutex_unlock(&q_mu);
    return NULL;
}

static void *consumer(void *arg)
{
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&q_mu);
        while (q_head == NULL && !q_shutdown)
            pthread_cond_wait(&q_cv, &q_mu);
        struct task *t = q_head;
        if (t) {
            q_head = t->next;
            if (!q_head)
                q_tail = NULL;
        }
        pthread_mutex_unlock(&q_mu);
        if (!t)
            break;              /* shut down and queue drained */
        task_output[t->id] = t->input[0] + t->input[1] + t->input[2] + t->input[3];
        free(t);
    }
    return NULL;
}

int main(void)
{
    pthread_t c[NCONS], p;
    for (int i = 0; i < NCONS; i++)
        pthread_create(&c[i], NULL, consumer, NULL);
    pthread_create(&p, NULL, producer, NULL);
    pthread_join(p, NULL);
    for (int i = 0; i < NCONS; i++)
        pthread_join(c[i], NULL);
    long sum = 0;
    for (int i = 0; i < NTASKS; i++)
        sum += task_output[i];
    printf("cv_task_queue_fig6_7: %ld\n", sum);
    return 0;
}
