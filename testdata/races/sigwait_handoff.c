/* verdict: race-free
 * needs: lib
 * expect-exit: 0
 */
/* A worker waits for work with sigwait: the producer fills a request,
 * then sends SIGUSR1 to the worker with pthread_kill. The signal is the
 * hand-off: the worker reads the request only after sigwait returns. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>

static long request[4];
static long answer;
static sigset_t usr1;

static void *worker(void *arg)
{
    (void)arg;
    int sig;
    for (int round = 0; round < 1; round++) {
        sigwait(&usr1, &sig);
        answer += request[0] + request[1] + request[2] + request[3];
    }
    return NULL;
}

int main(void)
{
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &usr1, NULL);
    pthread_t w;
    pthread_create(&w, NULL, worker, NULL);
    for (int round = 0; round < 1; round++) {
        for (int i = 0; i < 4; i++)
            request[i] = round * 10 + i;
        pthread_kill(w, SIGUSR1);
        struct timespec ts = {0, 20000000};
        nanosleep(&ts, NULL); /* not synchronisation: lets the worker take this round's signal */
    }
    pthread_join(w, NULL);
    printf("sigwait_handoff: %ld\n", answer);
    return 0;
}
