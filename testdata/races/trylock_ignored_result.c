/* verdict: race
 * racy: trylock_stats
 * needs: lib
 * expect-exit: 0
 */
/* pthread_mutex_trylock used wrongly: the updater ignores the return value
 * and updates trylock_stats whether or not it got the lock. The holder owns
 * stats_mu for the whole time the updater tries (enforced with two
 * semaphores), so the trylock fails (EBUSY) in every run and the updater's
 * write is unprotected. The holder's write (after posting holder_ready) and
 * the updater's write (before posting tried) are unordered: sem_post only
 * orders what precedes it. */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>

int trylock_stats;
pthread_mutex_t stats_mu = PTHREAD_MUTEX_INITIALIZER;
sem_t holder_ready, tried;
int trylock_rc;     /* written by updater, read by main after join */

static void *holder(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&stats_mu);
    sem_post(&holder_ready);
    trylock_stats += 1;
    sem_wait(&tried);
    pthread_mutex_unlock(&stats_mu);
    return NULL;
}

static void *updater(void *arg)
{
    (void)arg;
    sem_wait(&holder_ready);
    int rc = pthread_mutex_trylock(&stats_mu);  /* EBUSY: holder owns it */
    trylock_stats += 10;                        /* BUG: rc not checked */
    if (rc == 0)
        pthread_mutex_unlock(&stats_mu);
    trylock_rc = rc;
    sem_post(&tried);
    return NULL;
}

int main(void)
{
    pthread_t h, u;
    sem_init(&holder_ready, 0, 0);
    sem_init(&tried, 0, 0);
    pthread_create(&h, NULL, holder, NULL);
    pthread_create(&u, NULL, updater, NULL);
    pthread_join(h, NULL);
    pthread_join(u, NULL);
    printf("trylock_ignored_result: trylock %s\n", trylock_rc != 0 ? "failed" : "succeeded");
    return 0;
}
