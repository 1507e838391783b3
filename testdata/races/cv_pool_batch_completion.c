/* verdict: race-free
 * needs: lib, cv
 * expect-exit: 0
 */
/* A fixed pool of workers takes jobs from a mutex/condition-variable
 * queue; each job fills a result slot and the worker that finishes it
 * signals the submitter through a per-batch completion counter guarded by
 * a second mutex and condition variable. The submitter reads the results
 * after the counter reaches the batch size. Signallers are pool workers,
 * waiters are the submitting thread, and several workers signal the same
 * condition variable. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define WORKERS 3
#define JOBS 40

struct job {
    int index;
    struct job *next;
};

static pthread_mutex_t queue_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t queue_cv = PTHREAD_COND_INITIALIZER;
static struct job *queue;
static int shutting_down;

static pthread_mutex_t done_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t done_cv = PTHREAD_COND_INITIALIZER;
static int done_count;

static long results[JOBS];

static void *worker(void *arg)
{
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&queue_mu);
        while (!queue && !shutting_down)
            pthread_cond_wait(&queue_cv, &queue_mu);
        struct job *j = queue;
        if (j)
            queue = j->next;
        pthread_mutex_unlock(&queue_mu);
        if (!j)
            return NULL;
        results[j->index] = (long)j->index * j->index;
        free(j);
        pthread_mutex_lock(&done_mu);
        done_count++;
        pthread_cond_signal(&done_cv);
        pthread_mutex_unlock(&done_mu);
    }
}

int main(void)
{
    pthread_t pool[WORKERS];
    for (int i = 0; i < WORKERS; i++)
        pthread_create(&pool[i], NULL, worker, NULL);
    for (int i = 0; i < JOBS; i++) {
        struct job *j = malloc(sizeof *j);
        j->index = i;
        pthread_mutex_lock(&queue_mu);
        j->next = queue;
        queue = j;
        pthread_cond_signal(&queue_cv);
        pthread_mutex_unlock(&queue_mu);
    }
    pthread_mutex_lock(&done_mu);
    while (done_count < JOBS)
        pthread_cond_wait(&done_cv, &done_mu);
    pthread_mutex_unlock(&done_mu);
    long sum = 0;
    for (int i = 0; i < JOBS; i++)
        sum += results[i];
    pthread_mutex_lock(&queue_mu);
    shutting_down = 1;
    pthread_cond_broadcast(&queue_cv);
    pthread_mutex_unlock(&queue_mu);
    for (int i = 0; i < WORKERS; i++)
        pthread_join(pool[i], NULL);
    printf("cv_pool_batch_completion: %ld\n", sum);
    return 0;
}
