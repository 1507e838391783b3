/* verdict: race-free
 * figure: dissertation fig. 3.2
 * needs: lib
 * expect-exit: 0
 */
/* The counter of fig. 3.1 with the critical section protected by one mutex
 * (fig. 3.2). Every access to mutex_counter holds counter_mu. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

int mutex_counter;
pthread_mutex_t counter_mu = PTHREAD_MUTEX_INITIALIZER;

static void *incrementer(void *arg)
{
    (void)arg;
    for (int i = 0; i < 1000; i++) {
        pthread_mutex_lock(&counter_mu);
        int temp = mutex_counter;
        mutex_counter = temp + 1;
        pthread_mutex_unlock(&counter_mu);
    }
    return NULL;
}

int main(void)
{
    pthread_t t1, t2;
    pthread_create(&t1, NULL, incrementer, NULL);
    pthread_create(&t2, NULL, incrementer, NULL);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    printf("mutex_counter: %d\n", mutex_counter);
    return mutex_counter == 2000 ? 0 : 1;
}
