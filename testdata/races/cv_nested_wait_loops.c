/* verdict: race-free
 * figure: dissertation listing 6.5
 * needs: lib, cv
 * expect-exit: 0
 */
/* Listing 6.5: the wait sits in nested loops inside an outer work loop.
 * For each round the consumer waits (middle loop) until the producer has
 * published that round, and inside it (inner loop) for a wake-up token;
 * then it processes round_data[round] outside the lock. The producer
 * writes round_data[r] before publishing r under the mutex. Which loop end
 * is the real synchronisation point is not obvious from the code shape. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

#define ROUNDS 40
int round_data[ROUNDS + 1];
int published_round;        /* protected by r_mu */
int wake_pending;           /* protected by r_mu */
pthread_mutex_t r_mu = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t r_cv = PTHREAD_COND_INITIALIZER;
long nested_sum;

static void *consumer(void *arg)
{
    (void)arg;
    for (int round = 1; round <= ROUNDS; round++) {     /* while (!done) */
        pthread_mutex_lock(&r_mu);
        while (published_round < round) {               /* while (this) */
            while (!wake_pending)                       /* while (that) */
                pthread_cond_wait(&r_cv, &r_mu);
            wake_pending = 0;
        }
        pthread_mutex_unlock(&r_mu);
        nested_sum += round_data[round];                /* working */
        round_data[round] = 0;
    }
    return NULL;
}

static void *producer(void *arg)
{
    (void)arg;
    for (int r = 1; r <= ROUNDS; r++) {
        round_data[r] = r * 100;
        pthread_mutex_lock(&r_mu);
        published_round = r;
        wake_pending = 1;
        pthread_cond_signal(&r_cv);
        pthread_mutex_unlock(&r_mu);
    }
    return NULL;
}

int main(void)
{
    pthread_t c, p;
    pthread_create(&c, NULL, consumer, NULL);
    pthread_create(&p, NULL, producer, NULL);
    pthread_join(c, NULL);
    pthread_join(p, NULL);
    printf("cv_nested_wait_loops: %ld\n", nested_sum);
    return 0;
}
