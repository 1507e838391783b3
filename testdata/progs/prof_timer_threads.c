/* expect-exit: 0 */
/* A 10-microsecond ITIMER_PROF with the program's own SIGPROF handler
 * while threads are created and joined in rounds: the signal lands on
 * new, exiting and runtime threads alike. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

static volatile sig_atomic_t hits;
static long sums[8];

static void on_prof(int sig)
{
    (void)sig;
    hits++;
}

static void *work(void *arg)
{
    long *s = arg;
    for (int i = 0; i < 20000; i++)
        *s += i;
    return NULL;
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_prof;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGPROF, &sa, NULL);
    struct itimerval it = {{0, 10}, {0, 10}};
    setitimer(ITIMER_PROF, &it, NULL);
    for (int r = 0; r < 100; r++) {
        pthread_t t[8];
        for (int i = 0; i < 8; i++)
            pthread_create(&t[i], NULL, work, &sums[i]);
        for (int i = 0; i < 8; i++)
            pthread_join(t[i], NULL);
    }
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_PROF, &off, NULL);
    printf("%ld %ld\n", sums[0], sums[7]);
    return 0;
}
