/* verdict: race-free
 * figure: dissertation fig. 6.2 (left)
 * needs: lib
 * expect-exit: 0
 */
/* The ordinary condition-variable case (fig. 6.2, left): the waiter is
 * already blocked in pthread_cond_wait when the signaller sets the
 * predicate and signals (the 20 ms sleep forces that order). The
 * happens-before edge signal -> wait is visible by intercepting the two
 * calls. cv_payload is written before the signal and read after the
 * wait loop. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

int cv_payload[4];
int cv_ready;               /* protected by cv_mu */
pthread_mutex_t cv_mu = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t cv_cond = PTHREAD_COND_INITIALIZER;
int waiter_sum;

static void *waiter(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&cv_mu);
    while (!cv_ready)
        pthread_cond_wait(&cv_cond, &cv_mu);
    pthread_mutex_unlock(&cv_mu);
    waiter_sum = cv_payload[0] + cv_payload[1] + cv_payload[2] + cv_payload[3];
    return NULL;
}

static void *signaller(void *arg)
{
    (void)arg;
    usleep(20000);              /* let the waiter block first */
    for (int i = 0; i < 4; i++)
        cv_payload[i] = i + 1;
    pthread_mutex_lock(&cv_mu);
    cv_ready = 1;
    pthread_cond_signal(&cv_cond);
    pthread_mutex_unlock(&cv_mu);
    return NULL;
}

int main(void)
{
    pthread_t w, s;
    pthread_create(&w, NULL, waiter, NULL);
    pthread_create(&s, NULL, signaller, NULL);
    pthread_join(w, NULL);
    pthread_join(s, NULL);
    printf("cv_signal_after_wait: %d\n", waiter_sum);
    return 0;
}
