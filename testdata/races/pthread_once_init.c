/* verdict: race-free
 * needs: lib
 * expect-exit: 0
 */
/* Four threads call pthread_once; exactly one of them runs init_config,
 * which writes once_config. pthread_once orders the initialisation before
 * every caller's return, so the later reads are race-free. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

#define NT 4
int once_config[8];
int once_init_runs;
pthread_once_t config_once = PTHREAD_ONCE_INIT;
long once_results[NT];

static void init_config(void)
{
    for (int i = 0; i < 8; i++)
        once_config[i] = i * i;
    once_init_runs++;
}

static void *worker(void *arg)
{
    long id = (long)arg;
    pthread_once(&config_once, init_config);
    long sum = 0;
    for (int i = 0; i < 8; i++)
        sum += once_config[i];
    once_results[id] = sum;
    return NULL;
}

int main(void)
{
    pthread_t t[NT];
    for (long i = 0; i < NT; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < NT; i++)
        pthread_join(t[i], NULL);
    printf("pthread_once_init: runs %d sums %ld %ld %ld %ld\n", once_init_runs,
           once_results[0], once_results[1], once_results[2], once_results[3]);
    return 0;
}
