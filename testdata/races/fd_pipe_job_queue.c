/* verdict: race-free
 * needs: lib
 * expect-exit: 0
 */
/* A dispatcher hands heap jobs to a worker by writing the job pointers into
 * a pipe; the worker reads each pointer, processes the job and frees it.
 * No lock and no atomic: the pipe orders the dispatcher's initialisation of
 * a job before the worker's use of it (the worker can only read the
 * pointer after it was written). A NULL pointer ends the stream. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct job {
    int id;
    double weights[6];
};

static int job_pipe[2];
static double processed_total;

__attribute__((noinline)) static struct job *make_job(int id)
{
    struct job *j = malloc(sizeof *j);
    if (!j)
        abort();
    j->id = id;
    for (int i = 0; i < 6; i++)
        j->weights[i] = id * 0.5 + i;
    return j;
}

static void *worker(void *arg)
{
    (void)arg;
    for (;;) {
        struct job *j;
        if (read(job_pipe[0], &j, sizeof j) != sizeof j || j == NULL)
            break;
        for (int i = 0; i < 6; i++)
            processed_total += j->weights[i];
        j->id = -1;
        free(j);
    }
    return NULL;
}

int main(void)
{
    if (pipe(job_pipe) != 0)
        return 1;
    pthread_t w;
    pthread_create(&w, NULL, worker, NULL);
    for (int id = 0; id < 300; id++) {
        struct job *j = make_job(id);
        if (write(job_pipe[1], &j, sizeof j) != sizeof j)
            return 1;
    }
    struct job *stop = NULL;
    if (write(job_pipe[1], &stop, sizeof stop) != sizeof stop)
        return 1;
    pthread_join(w, NULL);
    printf("fd_pipe_job_queue: %.1f\n", processed_total);
    return 0;
}
