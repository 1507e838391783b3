/* verdict: race-free
 * needs: lib
 * expect-exit: 0
 */
/* A maintenance thread holds its own lock for a whole pass, as
 * memcached's LRU maintainer does: it updates its statistics under that
 * lock (more variables than a region's record holds), builds a job
 * and queues it under the queue's lock, taken inside the pass. A worker
 * takes the job from the queue and reads it while it still holds the
 * queue's lock, then runs it outside. The job was filled before it was
 * queued and the worker took the queue's lock after that: no race.
 * (Until 2026-11-29 the queue's hand-over went unseen, the region's
 * record being full of statistics, and the job's fields were reported.) */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define STATS 48
#define JOBS 2000

struct job {
    struct job *next;
    long id, weight;
};

static pthread_mutex_t maint_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static long pass_stats[STATS];
static struct job *queue;
static int finished;

/* make_job is the pass's own work; kept out of line so that the job is
 * filled before the queue's lock is taken, as in the source */
static __attribute__((noinline)) struct job *make_job(long n)
{
    struct job *j = malloc(sizeof *j);
    j->id = n;
    j->weight = pass_stats[n % STATS];
    return j;
}

static void *maintainer(void *arg)
{
    (void)arg;
    for (long n = 0; n < JOBS; n++) {
        pthread_mutex_lock(&maint_lock);
        for (int s = 0; s < STATS; s++)
            pass_stats[(n + 7 * s) % STATS]++;
        struct job *j = make_job(n);
        pthread_mutex_lock(&queue_lock);
        j->next = queue;
        queue = j;
        if (n == JOBS - 1)
            finished = 1;
        pthread_mutex_unlock(&queue_lock);
        pthread_mutex_unlock(&maint_lock);
    }
    return NULL;
}

static void *worker(void *arg)
{
    long *sum = arg;
    for (;;) {
        pthread_mutex_lock(&queue_lock);
        struct job *j = queue;
        long weight = 0;
        if (j) {
            weight = j->weight;
            queue = j->next;
        }
        int done = finished && !queue;
        pthread_mutex_unlock(&queue_lock);
        if (j) {
            *sum += weight + j->id;
            free(j);
        } else if (done) {
            return NULL;
        }
    }
}

int main(void)
{
    pthread_t m, w;
    long sum = 0;
    pthread_create(&m, NULL, maintainer, NULL);
    pthread_create(&w, NULL, worker, &sum);
    pthread_join(m, NULL);
    pthread_join(w, NULL);
    printf("%s\n", sum > 0 ? "done" : "nothing");
    return 0;
}
