/* verdict: race-free
 * needs: lib, cv
 * expect-exit: 0
 */
/* The producer fills a slot outside the lock, then, holding mu, takes a
 * second (logging) mutex, counts the hand-off, releases the inner mutex,
 * sets the flag and signals. The consumer waits for the flag and reads the
 * slot after unlocking. The inner lock must not end the producer's
 * lock-protected region: the flag write after it is the write/read
 * relation that orders the slot (dissertation ch. 6.4). Three rounds; the
 * consumer resets the flag each time. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int ready;
static int handoffs;
static long slot[3];
static long total;

static void *producer(void *arg)
{
    (void)arg;
    for (int i = 0; i < 3; i++) {
        slot[i] = 100 * (i + 1);
        pthread_mutex_lock(&mu);
        while (ready)
            pthread_cond_wait(&cv, &mu);
        pthread_mutex_lock(&log_mu);
        handoffs++;
        pthread_mutex_unlock(&log_mu);
        ready = 1;
        pthread_cond_broadcast(&cv);
        pthread_mutex_unlock(&mu);
    }
    return NULL;
}

int main(void)
{
    pthread_t t;
    pthread_create(&t, NULL, producer, NULL);
    for (int i = 0; i < 3; i++) {
        pthread_mutex_lock(&mu);
        while (!ready)
            pthread_cond_wait(&cv, &mu);
        ready = 0;
        pthread_cond_broadcast(&cv);
        pthread_mutex_unlock(&mu);
        total += slot[i];
    }
    pthread_join(t, NULL);
    printf("total %ld handoffs %d\n", total, handoffs);
    return 0;
}
