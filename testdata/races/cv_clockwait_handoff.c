/* verdict: race-free
 * needs: lib
 * expect-exit: 0
 */
/* A consumer waits with pthread_cond_clockwait (CLOCK_MONOTONIC, the call
 * std::condition_variable::wait_for compiles to) until the producer has
 * published its result under the mutex; it then reads the result outside
 * the lock. The producer signals while the consumer waits (it sleeps
 * first), so the wait returns by the signal and the result's write happens
 * before the read. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int ready;
static long result;

static void *producer(void *arg)
{
    (void)arg;
    usleep(50 * 1000);
    result = 6 * 7;
    pthread_mutex_lock(&mu);
    ready = 1;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&mu);
    return NULL;
}

int main(void)
{
    pthread_t t;
    pthread_create(&t, NULL, producer, NULL);
    pthread_mutex_lock(&mu);
    while (!ready) {
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_sec += 10;
        pthread_cond_clockwait(&cv, &mu, CLOCK_MONOTONIC, &until);
    }
    pthread_mutex_unlock(&mu);
    printf("result %ld\n", result);
    pthread_join(t, NULL);
    return 0;
}
