/* verdict: race-free
 * needs: lib
 * expect-exit: 0
 */
/* A main loop that counts SIGUSR1 "ticks" in a plain variable that only
 * it and its own handler touch, while two workers (which block the
 * signal) fill their slices of a table and send the ticks with kill().
 * Everything a handler does is the main thread's own: the tick counter is
 * never another thread's, and the workers' slices are read after the
 * joins. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

static volatile sig_atomic_t ticks_seen;
static long tick_total;      /* main thread and its handler only */
static long table[2][64];

static void on_tick(int sig)
{
    (void)sig;
    tick_total += 2;
    ticks_seen++;
}

static void *worker(void *arg)
{
    long *slice = arg;
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 64; i++)
            slice[i] += i + round;
        kill(getpid(), SIGUSR1);
        usleep(1000);
    }
    return NULL;
}

int main(void)
{
    struct sigaction sa = {0};
    sa.sa_handler = on_tick;
    sigaction(SIGUSR1, &sa, NULL);
    sigset_t usr1, old;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &usr1, &old); /* the workers inherit the block */
    pthread_t w[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&w[i], NULL, worker, table[i]);
    pthread_sigmask(SIG_SETMASK, &old, NULL); /* only main takes the ticks */
    while (ticks_seen < 1)
        usleep(500);
    for (int i = 0; i < 2; i++)
        pthread_join(w[i], NULL);
    long sum = 0;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 64; j++)
            sum += table[i][j];
    printf("table %ld, ticks %s\n", sum, tick_total >= 2 ? "seen" : "missing");
    return 0;
}
