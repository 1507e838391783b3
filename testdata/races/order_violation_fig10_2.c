/* verdict: race
 * racy: GLOB_X, GLOB_Y
 * figure: dissertation fig. 10.2
 * expect-exit: 0
 */
/* Fig. 10.2 (X and Y renamed GLOB_X and GLOB_Y): thread 1 writes GLOB_X and
 * reads GLOB_Y, thread 2 writes GLOB_Y and reads GLOB_X, with no
 * synchronisation. Both variables race in every run; t1 and t2 are each
 * written by one thread and read by main after the joins (not racy). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

int GLOB_X = 0;
int GLOB_Y = 0;
int t1 = 0;
int t2 = 0;

static void *function_1(void *arg)
{
    (void)arg;
    GLOB_X = 1;
    t1 = GLOB_Y;
    return NULL;
}

static void *function_2(void *arg)
{
    (void)arg;
    GLOB_Y = 1;
    t2 = GLOB_X;
    return NULL;
}

int main(void)
{
    pthread_t a, b;
    pthread_create(&a, NULL, function_1, NULL);
    pthread_create(&b, NULL, function_2, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    puts(t1 + t2 >= 0 ? "order_violation_fig10_2: done" : "impossible");
    return 0;
}
