/* expect-exit: 0 */
/* Children made without fork(): clone() with only SIGCHLD (a process
 * that shares nothing and runs no fork handlers) while another thread
 * keeps taking a mutex and allocating, and vfork() children that leave
 * with _exit (sharing the parent's memory until then). Each child's exit
 * status comes back to the parent. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static long counter;
static volatile int stop;

static void *busy(void *arg)
{
    (void)arg;
    while (!stop) {
        pthread_mutex_lock(&mu);
        counter++;
        pthread_mutex_unlock(&mu);
        free(malloc(32));
    }
    return NULL;
}

static int child(void *arg)
{
    long *v = arg;
    char *s = malloc(64);
    int n = snprintf(s, 64, "%ld", *v * 2);
    free(s);
    return n == 0 ? 1 : 3;
}

int main(void)
{
    pthread_t t;
    pthread_create(&t, NULL, busy, NULL);
    int cloned = 0, vforked = 0;
    for (int i = 0; i < 40; i++) {
        char *stack = malloc(1 << 16);
        long v = i;
        pid_t pid = clone(child, stack + (1 << 16), SIGCHLD, &v);
        int st = 0;
        if (pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 3)
            cloned++;
        free(stack);
    }
    for (int i = 0; i < 40; i++) {
        pid_t pid = vfork();
        if (pid == 0)
            _exit(5);
        int st = 0;
        if (pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 5)
            vforked++;
    }
    stop = 1;
    pthread_join(t, NULL);
    printf("clone children ok: %d, vfork children ok: %d\n", cloned, vforked);
    return 0;
}
