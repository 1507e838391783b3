/* expect-exit: 0 */
/* A daemon-style start: close every descriptor but stdout (stdin and
 * stderr included, and whatever the runtime keeps high up), then open
 * files, make a pipe and run threads that use them. The descriptor
 * numbers the program gets are printed: they must be the native ones. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int pipefd[2];

static void *writer(void *arg)
{
    (void)arg;
    const char msg[] = "through the pipe";
    write(pipefd[1], msg, sizeof msg);
    return NULL;
}

int main(void)
{
    close(0);
    close(2);
    for (int fd = 3; fd < 64; fd++)
        close(fd);
    close_range(64, ~0U, 0); /* what glibc's closefrom does */
    int a = open("/dev/null", O_RDONLY);
    int b = open("/dev/null", O_WRONLY);
    pipe(pipefd);
    pthread_t t;
    pthread_create(&t, NULL, writer, NULL);
    char buf[32] = {0};
    read(pipefd[0], buf, sizeof buf);
    pthread_join(t, NULL);
    printf("qa_close_all_fds: fds %d %d %d %d, read \"%s\"\n", a, b, pipefd[0], pipefd[1], buf);
    return 0;
}
