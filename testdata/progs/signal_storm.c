/* expect-exit: 0 */
/* corpus-variants: covering (a stress program: see coveringVariants in cmd/hgrewrite/e2e_test.go) */
/* A timer signal every 50 microseconds whose handler updates a global
 * table, while three threads run mutex loops and the main thread allocates
 * and frees. The handler can interrupt any thread, the runtime's own
 * included, at any instruction. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

static volatile sig_atomic_t ticks;
static volatile long table[256];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static long counter;

static void on_tick(int sig)
{
    (void)sig;
    ticks++;
    table[ticks & 255]++;
}

static void *spin(void *arg)
{
    (void)arg;
    for (int i = 0; i < 100000; i++) {
        pthread_mutex_lock(&mu);
        counter++;
        pthread_mutex_unlock(&mu);
    }
    return NULL;
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_tick;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = {{0, 50}, {0, 50}};
    setitimer(ITIMER_REAL, &it, NULL);
    pthread_t t[3];
    for (int i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, spin, NULL);
    unsigned long sum = 0;
    for (int i = 0; i < 100000; i++) {
        unsigned char *p = malloc(64 + (i & 255));
        memset(p, i, 64);
        sum += p[i & 63];
        free(p);
    }
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    struct sigaction back;
    sigaction(SIGALRM, NULL, &back);
    printf("counter %ld, sum %lu, handler reported back: %s\n", counter, sum,
           back.sa_handler == on_tick ? "yes" : "no");
    return 0;
}
