/* verdict: race
 * racy: job
 * expect-exit: 0
 */
/* As signal_handler_handoff, but the main thread wakes the worker before
 * it fills in the job: the signal orders nothing the main thread does
 * after sending it, so the worker's reads and the main thread's writes
 * are unordered in every run, whichever happens first. */
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
    pthread_sigmask(SIG_BLOCK, &usr1, NULL);
    pthread_t w;
    pthread_create(&w, NULL, worker, NULL);
    pthread_kill(w, SIGUSR1);
    for (int i = 0; i < 8; i++)
        job[i] = 10 * i + 1;
    pthread_join(w, NULL);
    printf("signal_sent_before_write_race: %ld\n", result > 0);
    return 0;
}
