/* verdict: race
 * racy: DATA_X
 * figure: dissertation fig. 6.3
 * needs: lib, cv
 * expect-exit: 0
 */
/* Fig. 6.3: two signaller/waiter pairs (S1,W1) and (S2,W2) share one
 * condition variable CV (and its mutex MU). S1 publishes DATA_X through
 * FLAG1, S2 publishes DATA_Y through FLAG2. W1 correctly reads DATA_X, W2
 * correctly reads DATA_Y -- but W2 also reads DATA_X, which only S1's
 * signal would order. Broadcast is used (with a plain signal the wrong
 * waiter could consume the wake-up and the program could hang).
 *
 * To make the race independent of scheduling under C11 (where the shared
 * mutex would otherwise order S1's write before W2's read whenever S1's
 * critical section comes first), S1 writes DATA_X only after W2 has left
 * its wait loop: W2 posts the semaphore w2_awake after reading DATA_Y and
 * before reading DATA_X. Then S1's write of DATA_X and W2's read of it are
 * unordered in every run. S2's broadcast also wakes W1 spuriously (W1
 * re-checks FLAG1 and waits again). The detector must keep the two pairs'
 * happens-before edges apart (write/read relation on FLAG1/FLAG2, ch. 6.4)
 * to report DATA_X and nothing on DATA_Y. */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>

int DATA_X, DATA_Y;
int FLAG1, FLAG2;           /* protected by MU */
pthread_mutex_t MU = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t CV = PTHREAD_COND_INITIALIZER;
sem_t w2_awake;
int w1_seen, w2_seen_y;

static void consume(int v) { __asm__ __volatile__("" : : "r"(v)); }

static void *S1(void *arg)
{
    (void)arg;
    sem_wait(&w2_awake);
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
    pthread_mutex_lock(&MU);
    while (!FLAG1)
        pthread_cond_wait(&CV, &MU);
    pthread_mutex_unlock(&MU);
    w1_seen = DATA_X;           /* correct: ordered by S1's signal */
    return NULL;
}

static void *W2(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&MU);
    while (!FLAG2)
        pthread_cond_wait(&CV, &MU);
    pthread_mutex_unlock(&MU);
    w2_seen_y = DATA_Y;         /* correct: ordered by S2's signal */
    sem_post(&w2_awake);
    consume(DATA_X);            /* BUG: nothing orders S1's write */
    return NULL;
}

int main(void)
{
    pthread_t s1, s2, w1, w2;
    sem_init(&w2_awake, 0, 0);
    pthread_create(&w1, NULL, W1, NULL);
    pthread_create(&w2, NULL, W2, NULL);
    pthread_create(&s1, NULL, S1, NULL);
    pthread_create(&s2, NULL, S2, NULL);
    pthread_join(s1, NULL);
    pthread_join(s2, NULL);
    pthread_join(w1, NULL);
    pthread_join(w2, NULL);
    printf("cv_shared_two_pairs_race_fig6_3: %d %d\n", w1_seen, w2_seen_y);
    return 0;
}
