/* verdict: race
 * racy: served
 * needs: lib
 * expect-exit: 0
 */
/* A pre-forking server: the parent forks two worker processes, waits for
 * both and exits with the first failing worker's status. Each worker runs a pool of
 * three threads that take request numbers from a mutex-guarded counter
 * but count what they served in a plain global, without the lock: a race
 * inside each forked child, which a detector must see although the Go
 * runtime does not survive fork. The parent has no threads. Each pool
 * thread serves its first request before any goes on to a second (a
 * barrier), so that no one of them serves every request before the others
 * run: those first three updates of served race in every run. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define REQUESTS 3000

static pthread_mutex_t next_mu = PTHREAD_MUTEX_INITIALIZER;
static int next_request;
static long served;      /* updated by every pool thread without next_mu */
static long checksum;    /* guarded by next_mu */
static pthread_barrier_t first; /* every pool thread has served once */

static void *pool_thread(void *arg)
{
    (void)arg;
    for (int n = 0;; n++) {
        pthread_mutex_lock(&next_mu);
        int r = next_request < REQUESTS ? next_request++ : -1;
        if (r >= 0)
            checksum += r;
        pthread_mutex_unlock(&next_mu);
        if (r < 0)
            return NULL;
        served++;
        if (n == 0)
            pthread_barrier_wait(&first);
    }
}

static int worker_process(int id)
{
    pthread_t pool[3];
    pthread_barrier_init(&first, NULL, 3);
    for (int i = 0; i < 3; i++)
        if (pthread_create(&pool[i], NULL, pool_thread, NULL) != 0)
            return 1;
    for (int i = 0; i < 3; i++)
        pthread_join(pool[i], NULL);
    (void)id;
    return checksum == (long)REQUESTS * (REQUESTS - 1) / 2 ? 0 : 1;
}

int main(void)
{
    pid_t kids[2];
    for (int i = 0; i < 2; i++) {
        kids[i] = fork();
        if (kids[i] < 0)
            return 1;
        if (kids[i] == 0)
            exit(worker_process(i));
    }
    int status = 0;
    for (int i = 0; i < 2; i++) {
        int st;
        waitpid(kids[i], &st, 0);
        int code = WIFEXITED(st) ? WEXITSTATUS(st) : 1;
        if (status == 0)
            status = code;
    }
    printf("workers done\n");
    return status;
}
