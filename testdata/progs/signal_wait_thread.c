/* expect-exit: 0 */
/* Signals taken synchronously: the program starts with nothing blocked,
 * blocks SIGUSR1 and SIGUSR2 in every thread, and a dedicated thread takes
 * them with sigwait while the main thread sends them to the process; then
 * SIGTERM, blocked too, is read from a signalfd. A signal sent to the
 * process must reach only threads that do not block it: here, none, so it
 * waits for sigwait or the signalfd. */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <sys/signalfd.h>
#include <unistd.h>

static int usr1, usr2;
static sem_t taken;

static void *waiter(void *arg)
{
    sigset_t *set = arg;
    for (int got = 0; got < 20;) {
        int sig = 0;
        if (sigwait(set, &sig) != 0)
            break;
        if (sig == SIGUSR1)
            usr1++;
        if (sig == SIGUSR2)
            usr2++;
        got++;
        sem_post(&taken);
    }
    return NULL;
}

int main(void)
{
    sigset_t start;
    sigemptyset(&start);
    pthread_sigmask(SIG_BLOCK, NULL, &start);
    int blocked_at_start = 0;
    for (int s = 1; s < 32; s++)
        blocked_at_start += sigismember(&start, s);
    printf("signals blocked at start: %d\n", blocked_at_start);

    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigaddset(&set, SIGUSR2);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    sigset_t wait_set;
    sigemptyset(&wait_set);
    sigaddset(&wait_set, SIGUSR1);
    sigaddset(&wait_set, SIGUSR2);
    sem_init(&taken, 0, 0);
    pthread_t w;
    pthread_create(&w, NULL, waiter, &wait_set);
    for (int i = 0; i < 20; i++) {
        kill(getpid(), i % 2 ? SIGUSR2 : SIGUSR1);
        sem_wait(&taken); /* standard signals do not queue: one at a time */
    }
    pthread_join(w, NULL);
    printf("sigwait: %d SIGUSR1, %d SIGUSR2\n", usr1, usr2);

    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    int fd = signalfd(-1, &term, SFD_CLOEXEC);
    kill(getpid(), SIGTERM);
    struct signalfd_siginfo info;
    ssize_t n = read(fd, &info, sizeof info);
    printf("signalfd: %s signal %u\n", n == (ssize_t)sizeof info ? "read" : "no", n > 0 ? info.ssi_signo : 0);
    close(fd);
    return 0;
}
