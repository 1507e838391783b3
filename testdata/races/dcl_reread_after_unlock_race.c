/* verdict: race
 * racy: cached_config
 * needs: lib
 * expect-exit: 0
 */
/* Double-checked lazy initialisation gone wrong: the first caller creates
 * the configuration under the mutex and reads the pointer again after the
 * unlock to use it; a second thread takes the unlocked fast path and reads
 * the pointer without the mutex. The creator's write and the fast path's
 * read are unordered in every run (the semaphore only says the creator
 * has started). The fast path runs well after the creator's second read,
 * the order in which a detector that forgets a write once its thread
 * reads the location again in a later segment misses the race. */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct config {
    int verbosity;
    int retries;
};

struct config *cached_config;
static pthread_mutex_t config_mu = PTHREAD_MUTEX_INITIALIZER;
static sem_t started;

static struct config *get_config(void)
{
    pthread_mutex_lock(&config_mu);
    if (!cached_config) {
        struct config *c = malloc(sizeof *c);
        c->verbosity = 2;
        c->retries = 3;
        cached_config = c;
    }
    pthread_mutex_unlock(&config_mu);
    return cached_config; /* read again after the unlock */
}

static void *creator(void *arg)
{
    sem_post(&started);
    *(int *)arg = get_config()->retries;
    return NULL;
}

static void *fast_path(void *arg)
{
    sem_wait(&started);
    usleep(50000); /* not synchronisation: the creator is done by now */
    struct config *c = cached_config; /* BUG: no lock, no acquire */
    *(int *)arg = c != NULL;
    return NULL;
}

int main(void)
{
    int retries = 0, seen = 0;
    pthread_t a, b;
    sem_init(&started, 0, 0);
    pthread_create(&a, NULL, creator, &retries);
    pthread_create(&b, NULL, fast_path, &seen);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("dcl_reread_after_unlock_race: retries %d\n", retries);
    free(cached_config);
    return 0;
}
