/* verdict: race-free
 * needs: lib, cv
 * expect-exit: 0
 */
/* A server that daemonises a worker process while its own threads run:
 * the parent starts a logging thread, forks, and waits for the child's
 * answer on a pipe. The child (setsid, stdin closed) runs a thread pool
 * fed through a mutex-and-condition-variable queue of heap-allocated jobs;
 * workers add their results to a mutex-guarded total and free the jobs.
 * Memory the child inherited (the config table written before the fork)
 * is read by all its threads: it was written by the child's only thread
 * before it created them. Everything is ordered. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct job {
    struct job *next;
    int value;
};

static int config[16];
static pthread_mutex_t q_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t q_cv = PTHREAD_COND_INITIALIZER;
static struct job *q_head;
static int q_closed;
static long total;

static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static int log_lines;

static void *logger(void *arg)
{
    (void)arg;
    for (int i = 0; i < 200; i++) {
        pthread_mutex_lock(&log_mu);
        log_lines++;
        pthread_mutex_unlock(&log_mu);
    }
    return NULL;
}

static void *pool_worker(void *arg)
{
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&q_mu);
        while (!q_head && !q_closed)
            pthread_cond_wait(&q_cv, &q_mu);
        struct job *j = q_head;
        if (j)
            q_head = j->next;
        pthread_mutex_unlock(&q_mu);
        if (!j)
            return NULL;
        long v = (long)j->value * config[j->value % 16];
        free(j);
        pthread_mutex_lock(&q_mu);
        total += v;
        pthread_mutex_unlock(&q_mu);
    }
}

static long child_main(void)
{
    pthread_t pool[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&pool[i], NULL, pool_worker, NULL);
    for (int v = 0; v < 2000; v++) {
        struct job *j = malloc(sizeof *j);
        j->value = v;
        pthread_mutex_lock(&q_mu);
        j->next = q_head;
        q_head = j;
        pthread_cond_signal(&q_cv);
        pthread_mutex_unlock(&q_mu);
    }
    pthread_mutex_lock(&q_mu);
    q_closed = 1;
    pthread_cond_broadcast(&q_cv);
    pthread_mutex_unlock(&q_mu);
    for (int i = 0; i < 4; i++)
        pthread_join(pool[i], NULL);
    return total;
}

int main(void)
{
    for (int i = 0; i < 16; i++)
        config[i] = i + 1;
    pthread_t log_thread;
    pthread_create(&log_thread, NULL, logger, NULL);
    int answer[2];
    if (pipe(answer) != 0)
        return 1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(answer[0]);
        setsid();
        close(0);
        long t = child_main();
        if (write(answer[1], &t, sizeof t) != (ssize_t)sizeof t)
            _exit(1);
        _exit(0);
    }
    close(answer[1]);
    long got = 0;
    if (read(answer[0], &got, sizeof got) != (ssize_t)sizeof got)
        return 1;
    int st;
    waitpid(pid, &st, 0);
    pthread_join(log_thread, NULL);
    long want = 0;
    for (int v = 0; v < 2000; v++)
        want += (long)v * config[v % 16];
    printf("child total %s, %d log lines\n", got == want ? "right" : "wrong", log_lines);
    return got == want && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}
