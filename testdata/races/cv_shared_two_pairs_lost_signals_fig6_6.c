/* verdict: race-free
 * figure: dissertation fig. 6.6
 * needs: lib, cv
 * expect-exit: 0
 */
/* The fig. 6.3 program without the bug, run in the order S1, S2, W2, W1
 * discussed with fig. 6.6(b) (sleeps of 10/30/50 ms force it): both
 * waiters arrive after both broadcasts, so neither calls
 * pthread_cond_wait (lost signals). A detector that keeps only the last
 * signaller of CV synchronises W1 with S2 instead of S1 and reports a
 * false race on DATA_X; the write/read relation on FLAG1 (ch. 6.4) gives
 * the right edge S1 -> W1. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

int DATA_X, DATA_Y;
int FLAG1, FLAG2;           /* protected by MU */
pthread_mutex_t MU = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t CV = PTHREAD_COND_INITIALIZER;
int w1_seen, w2_seen;

static void *S1(void *arg)
{
    (void)arg;
    DATA_X = 1;
    pthread_mutex_lock(&MU);
    FLAG1 = 1;
    pthread_cond_broadcast(&CV);
    pthread_mutex_unlock(&MU);
    return NULL;
}

static void *S2(void *arg)
{
    (void)arg;
    usleep(10000);
    DATA_Y = 2;
    pthread_mutex_lock(&MU);
    FLAG2 = 1;
    pthread_cond_broadcast(&CV);
    pthread_mutex_unlock(&MU);
    return NULL;
}

static void *W1(void *arg)
{
    (void)arg;
    usleep(50000);
    pthread_mutex_lock(&MU);
    while (!FLAG1)
        pthread_cond_wait(&CV, &MU);
    pthread_mutex_unlock(&MU);
    w1_seen = DATA_X;
    return NULL;
}

static void *W2(void *arg)
{
    (void)arg;
    usleep(30000);
    pthread_mutex_lock(&MU);
    while (!FLAG2)
        pthread_cond_wait(&CV, &MU);
    pthread_mutex_unlock(&MU);
    w2_seen = DATA_Y;
    return NULL;
}

int main(void)
{
    pthread_t s1, s2, w1, w2;
    pthread_create(&s1, NULL, S1, NULL);
    pthread_create(&s2, NULL, S2, NULL);
    pthread_create(&w1, NULL, W1, NULL);
    pthread_create(&w2, NULL, W2, NULL);
    pthread_join(s1, NULL);
    pthread_join(s2, NULL);
    pthread_join(w1, NULL);
    pthread_join(w2, NULL);
    printf("cv_shared_two_pairs_lost_signals_fig6_6: %d %d\n", w1_seen, w2_seen);
    return 0;
}
