/* verdict: race
 * racy: racy_counter
 * figure: dissertation fig. 3.1
 * expect-exit: 0
 */
/* Two threads increment a global counter through a thread-local TEMP without
 * any synchronisation (the atomicity violation of fig. 1.1 / fig. 3.1).
 * Nothing orders the two threads' accesses, so they race in every run. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

int racy_counter;

static void *incrementer(void *arg)
{
    (void)arg;
    for (int i = 0; i < 1000; i++) {
        int temp = racy_counter;
        racy_counter = temp + 1;
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
    puts("unprotected_counter: done");
    return 0;
}
