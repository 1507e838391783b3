/* expect-exit: 0 */
/* Four threads each start /bin/sh with posix_spawn (and one uses
 * vfork+exec) to run a command that exits with a known status, and wait
 * for it; main prints the statuses in thread order. */
#define _GNU_SOURCE
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static void *spawner(void *arg)
{
    long i = (long)arg;
    char cmd[32];
    snprintf(cmd, sizeof cmd, "exit %ld", 10 + i);
    char *argv[] = {"sh", "-c", cmd, NULL};
    pid_t pid;
    if (i == 3) {
        pid = vfork();
        if (pid == 0) {
            execve("/bin/sh", argv, environ);
            _exit(127);
        }
    } else if (posix_spawn(&pid, "/bin/sh", NULL, NULL, argv, environ) != 0) {
        return (void *)-1L;
    }
    int st;
    waitpid(pid, &st, 0);
    return (void *)(long)WEXITSTATUS(st);
}

int main(void)
{
    pthread_t t[4];
    for (long i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, spawner, (void *)i);
    for (int i = 0; i < 4; i++) {
        void *r;
        pthread_join(t[i], &r);
        printf("qa_posix_spawn_threads: child %d exited %ld\n", i, (long)r);
    }
    return 0;
}
