/* verdict: race-free
 * needs: lib, cv
 * expect-exit: 0
 */
/* Four waiters wait for go_flag with the standard predicate loop; main
 * writes bcast_config, sets go_flag under the mutex and broadcasts. Waiters
 * that arrive late find go_flag set and never wait (lost broadcast), the
 * others are woken by it; all read bcast_config afterwards and write only
 * their own result slot. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

#define NW 4
int bcast_config[NW];
int go_flag;                /* protected by go_mu */
pthread_mutex_t go_mu = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t go_cv = PTHREAD_COND_INITIALIZER;
int bcast_result[NW];

static void *waiter(void *arg)
{
    long id = (long)arg;
    pthread_mutex_lock(&go_mu);
    while (!go_flag)
        pthread_cond_wait(&go_cv, &go_mu);
    pthread_mutex_unlock(&go_mu);
    bcast_result[id] = bcast_config[id] * 10;
    return NULL;
}

int main(void)
{
    pthread_t t[NW];
    for (long i = 0; i < NW; i++)
        pthread_create(&t[i], NULL, waiter, (void *)i);
    for (int i = 0; i < NW; i++)
        bcast_config[i] = i + 1;
    pthread_mutex_lock(&go_mu);
    go_flag = 1;
    pthread_cond_broadcast(&go_cv);
    pthread_mutex_unlock(&go_mu);
    for (int i = 0; i < NW; i++)
        pthread_join(t[i], NULL);
    printf("cv_broadcast_waiters: %d %d %d %d\n", bcast_result[0], bcast_result[1],
           bcast_result[2], bcast_result[3]);
    return 0;
}
