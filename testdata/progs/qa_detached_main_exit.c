/* expect-exit: 0 */
/* Detached workers and pthread_exit from main: main starts 200 detached
 * threads that add to a mutex-protected total, then leaves with
 * pthread_exit while they run. The last worker to finish prints the total;
 * the process ends (status 0) when that last thread returns. */
#include <pthread.h>
#include <stdio.h>

#define WORKERS 200

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static long total;
static int finished;

static void *worker(void *arg)
{
    long v = (long)arg;
    pthread_mutex_lock(&mu);
    total += v;
    int last = ++finished == WORKERS;
    pthread_mutex_unlock(&mu);
    if (last)
        printf("qa_detached_main_exit: %d workers, total %ld\n", WORKERS, total);
    return NULL;
}

int main(void)
{
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    for (long i = 1; i <= WORKERS; i++) {
        pthread_t t;
        if (pthread_create(&t, &attr, worker, (void *)i) != 0)
            return 1;
    }
    fflush(stdout);
    pthread_exit(NULL);
}
