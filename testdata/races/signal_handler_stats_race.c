/* verdict: race
 * racy: dump_requests
 * needs: lib
 * expect-exit: 0
 */
/* A "SIGUSR1 dumps the statistics" pattern gone wrong: the worker asks
 * the main thread for a dump with pthread_kill and then clears the
 * request counter itself, while the main thread's handler counts the
 * request in the same plain variable. Sending the signal orders only
 * what the worker did before it: its clear and the handler's increment
 * are unordered in every run. The main thread waits in pthread_join, so
 * the handler runs there, before the join returns. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>

static long dump_requests;  /* the handler's and the worker's, unlocked */
static long served[4];      /* the worker's, read after the join */
static pthread_t main_thread;

static void on_usr1(int sig)
{
    (void)sig;
    dump_requests++;
}

static void *worker(void *arg)
{
    for (int i = 0; i < 4; i++)
        served[i] = 100 + i;
    pthread_kill(main_thread, SIGUSR1);
    dump_requests = 0;
    return arg;
}

int main(void)
{
    struct sigaction sa = {0};
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, NULL);
    main_thread = pthread_self();
    pthread_t w;
    pthread_create(&w, NULL, worker, NULL);
    pthread_join(w, NULL);
    printf("served %ld\n", served[0] + served[1] + served[2] + served[3]);
    return 0;
}
