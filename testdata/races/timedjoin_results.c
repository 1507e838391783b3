/* verdict: race-free
 * needs: lib
 * expect-exit: 0
 */
/* A supervisor waits for its workers with pthread_timedjoin_np (giving up
 * after a deadline it never reaches) and pthread_tryjoin_np in a polling
 * loop, then reads what each worker wrote. A successful join orders the
 * worker's writes before the supervisor's reads, as pthread_join does. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <time.h>

static long worker_results[2][8];

static void *worker(void *arg)
{
    long id = (long)arg;
    for (int i = 0; i < 8; i++)
        worker_results[id][i] = id * 100 + i;
    return NULL;
}

int main(void)
{
    pthread_t a, b;
    pthread_create(&a, NULL, worker, (void *)0);
    pthread_create(&b, NULL, worker, (void *)1);
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 30;
    if (pthread_timedjoin_np(a, NULL, &deadline) != 0)
        return 1;
    while (pthread_tryjoin_np(b, NULL) == EBUSY)
        sched_yield();
    long sum = 0;
    for (int w = 0; w < 2; w++)
        for (int i = 0; i < 8; i++)
            sum += worker_results[w][i];
    printf("timedjoin_results: %ld\n", sum);
    return 0;
}
