/* verdict: race-free
 * figure: dissertation fig. 6.1
 * needs: lib, cv
 * expect-exit: 0
 */
/* Fig. 6.1 / fig. 1.7, lost signal: thread 1 updates DATA, sets FLAG under
 * the mutex and signals. Thread 2 arrives 30 ms later (the sleep forces
 * the order of fig. 6.2, right), finds FLAG already set and never calls
 * pthread_cond_wait. The synchronisation is real (FLAG is written and read
 * under the mutex) but no wait is intercepted: the detector has to treat
 * the end of the "while (FLAG != 1) wait" loop as the synchronisation
 * point (ch. 6.3). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

int DATA = 0;
int FLAG = 0;
pthread_mutex_t l = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

static void *thread_1(void *arg)
{
    (void)arg;
    DATA++;
    pthread_mutex_lock(&l);
    FLAG = 1;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&l);
    return NULL;
}

static void *thread_2(void *arg)
{
    (void)arg;
    usleep(30000);              /* arrive after the signal */
    pthread_mutex_lock(&l);
    while (FLAG != 1)
        pthread_cond_wait(&cv, &l);
    pthread_mutex_unlock(&l);
    DATA--;
    return NULL;
}

int main(void)
{
    pthread_t t1, t2;
    pthread_create(&t1, NULL, thread_1, NULL);
    pthread_create(&t2, NULL, thread_2, NULL);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    printf("cv_lost_signal_fig6_1: %d\n", DATA);
    return 0;
}
