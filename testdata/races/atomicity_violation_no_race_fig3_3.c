/* verdict: race-free
 * figure: dissertation fig. 3.3
 * needs: lib
 * expect-exit: 0
 */
/* Fig. 3.3: the read and the write of COUNTER are each inside their own
 * critical section, so there is no data race, although the increment is
 * not atomic (updates can be lost). A race detector must stay silent; the
 * final value is nondeterministic and therefore not printed. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

int COUNTER;
pthread_mutex_t L = PTHREAD_MUTEX_INITIALIZER;

static void *incrementer(void *arg)
{
    (void)arg;
    for (int i = 0; i < 1000; i++) {
        int TEMP;
        pthread_mutex_lock(&L);
        TEMP = COUNTER;
        pthread_mutex_unlock(&L);
        pthread_mutex_lock(&L);
        COUNTER = TEMP + 1;
        pthread_mutex_unlock(&L);
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
    int final = COUNTER;
    puts(final >= 1000 && final <= 2000 ? "atomicity_violation_no_race_fig3_3: done"
                                        : "atomicity_violation_no_race_fig3_3: impossible");
    return 0;
}
