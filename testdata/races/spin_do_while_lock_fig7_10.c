/* verdict: race-free
 * figure: dissertation fig. 7.10
 * needs: lib, spin
 * expect-exit: 0
 */
/* Fig. 7.10: thread 2 polls COND in a do-while loop, reading it under lock
 * l into the local c and sleeping 1 ms between polls ("sleep(1)" scaled);
 * thread 1 writes X and then sets COND under l. The figure's loop reads
 * "} while (c);", which would either exit at once (and skip the write of X)
 * or never terminate; the intended "} while (!c);" is used here. X is
 * ordered by the mutex (thread 1's unlock after writing X, thread 2's lock
 * of the poll that sees COND == 1), so there is no race. A hybrid detector
 * that draws no happens-before from locks must recognise this loop as a
 * spinning read loop, although its condition variable c is assigned in
 * the body; the dissertation's algorithm does not (ch. 7.2.4) and reports
 * a false positive on X. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static int COND = 0;
int X;
pthread_mutex_t l = PTHREAD_MUTEX_INITIALIZER;

static void *Thread1(void *arg)
{
    (void)arg;
    X = 1;

    pthread_mutex_lock(&l);
    COND = 1;
    pthread_mutex_unlock(&l);
    return NULL;
}

static void *Thread2(void *arg)
{
    int c;
    (void)arg;
    do {
        pthread_mutex_lock(&l);
        c = COND;
        pthread_mutex_unlock(&l);
        usleep(1000);
    } while (!c);

    if (c) {
        X = 2;
    }
    return NULL;
}

int main(void)
{
    pthread_t t1, t2;
    pthread_create(&t1, NULL, Thread1, NULL);
    pthread_create(&t2, NULL, Thread2, NULL);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    printf("spin_do_while_lock_fig7_10: %d\n", X);
    return 0;
}
