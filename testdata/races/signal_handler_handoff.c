/* verdict: race-free
 * needs: lib
 * expect-exit: 0
 */
/* A worker sleeps in sigsuspend until its SIGUSR1 handler has run; the
 * main thread fills in the job, then wakes the worker with pthread_kill.
 * Sending the signal releases, the handler's entry acquires: the worker
 * reads the job after the handler ran, so after the main thread wrote it.
 * (The classic pattern: the signal is blocked outside sigsuspend, so it
 * cannot arrive between the flag test and the wait.) */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>

static volatile sig_atomic_t woken;
static long job[8];
static long result;

static void on_usr1(int sig)
{
    (void)sig;
    woken = 1;
}

static void *worker(void *arg)
{
    sigset_t during;
    pthread_sigmask(SIG_SETMASK, NULL, &during);
    sigdelset(&during, SIGUSR1);
    while (!woken)
        sigsuspend(&during);
    for (int i = 0; i < 8; i++)
        result += job[i];
    return arg;
}

int main(void)
{
    struct sigaction sa = {0};
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, NULL);
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &usr1, NULL); /* the worker inherits it */
    pthread_t w;
    pthread_create(&w, NULL, worker, NULL);
    for (int i = 0; i < 8; i++)
        job[i] = 10 * i + 1;
    pthread_kill(w, SIGUSR1);
    pthread_join(w, NULL);
    printf("signal_handler_handoff: %ld\n", result);
    return 0;
}
