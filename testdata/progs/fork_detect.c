/* expect-exit: 0 */
/* Races in forked children, the ways servers and test harnesses fork:
 * a worker child (A) that forks a grandchild (G) before starting its own
 * threads, and a daemon (D: fork, setsid, fork again, every descriptor
 * but one closed) that the parent hears from only through a pipe. Each of
 * A, G and D runs two threads that count into a global of its own
 * without a lock: three races, one per process, each reported as its own
 * process's. Every process writes "<role> pid <n>" to stderr so a test can
 * match reports to processes; stdout carries only what does not depend on
 * pids. The parent reaps with wait() until ECHILD and a SIGCHLD handler
 * counts: no process of the runtime's may show up there. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static long a_hits, g_hits, d_hits;
static volatile sig_atomic_t sigchld_seen;

static void on_sigchld(int sig)
{
    (void)sig;
    sigchld_seen = 1;
}

static void *count_into(void *p)
{
    long *hits = p;
    for (int i = 0; i < 2000; i++)
        (*hits)++;
    return NULL;
}

static void race_on(long *hits)
{
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, count_into, hits);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
}

static void say(const char *role)
{
    fprintf(stderr, "%s pid %d\n", role, (int)getpid());
}

static int worker(void)
{
    say("A");
    pid_t g = fork();
    if (g == 0) {
        say("G");
        race_on(&g_hits);
        _exit(0);
    }
    race_on(&a_hits);
    int st;
    if (waitpid(g, &st, 0) != g)
        return 1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

static void daemon_child(int done_fd)
{
    setsid();
    if (fork() != 0)
        _exit(0);
    for (int fd = 3; fd < 1024; fd++)
        if (fd != done_fd)
            close(fd);
    say("D");
    race_on(&d_hits);
    char ok = d_hits > 0 ? 'y' : 'n';
    if (write(done_fd, &ok, 1) != 1)
        _exit(1);
    _exit(0);
}

int main(void)
{
    signal(SIGCHLD, on_sigchld);
    fflush(stdout);
    pid_t a = fork();
    if (a == 0)
        exit(worker());
    int done[2];
    if (pipe(done) != 0)
        return 1;
    if (fork() == 0) {
        close(done[0]);
        daemon_child(done[1]);
    }
    close(done[1]);
    char answer = '?';
    ssize_t n = read(done[0], &answer, 1);
    int reaped = 0, failed = 0, st;
    while (wait(&st) > 0) {
        reaped++;
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
            failed++;
    }
    printf("daemon answered %c (%zd byte)\n", answer, n);
    printf("reaped %d children (%s), %d failed, SIGCHLD %s\n", reaped, errno == ECHILD ? "then ECHILD" : strerror(errno),
           failed, sigchld_seen ? "seen" : "not seen");
    return failed ? 1 : 0;
}
