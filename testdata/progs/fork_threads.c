/* expect-exit: 0 */
/* corpus-variants: covering (a stress program: see coveringVariants in cmd/hgrewrite/e2e_test.go) */
/* Parent starts 2 threads, then forks while they run. The child starts 2
 * threads of its own, computes a mutex-protected sum, prints it and exits
 * with status 7. The parent waits for the child, prints its status, then
 * joins its own threads and prints its result. stdout is flushed before
 * fork so nothing is duplicated. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

struct acc {
    pthread_mutex_t mu;
    long total;
    long items;
};

static struct acc parent_acc = { PTHREAD_MUTEX_INITIALIZER, 0, 0 };
static struct acc child_acc = { PTHREAD_MUTEX_INITIALIZER, 0, 0 };

struct job {
    struct acc *acc;
    int base;
    int n;
};

static void *work(void *p)
{
    struct job *j = p;
    long *buf = malloc(sizeof(long) * 128);
    if (!buf)
        return NULL;
    for (int i = 0; i < 128; i++)
        buf[i] = j->base + i;
    for (int i = 0; i < j->n; i++) {
        long v = buf[i % 128] * 3 + (i & 7);
        pthread_mutex_lock(&j->acc->mu);
        j->acc->total += v;
        j->acc->items++;
        pthread_mutex_unlock(&j->acc->mu);
    }
    free(buf);
    return NULL;
}

static int child_main(void)
{
    pthread_t t[2];
    struct job jobs[2] = { { &child_acc, 1000, 30000 }, { &child_acc, 2000, 30000 } };
    for (int i = 0; i < 2; i++)
        if (pthread_create(&t[i], NULL, work, &jobs[i]) != 0)
            return 1;
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("child: items=%ld total=%ld\n", child_acc.items, child_acc.total);
    fflush(stdout);
    return 7;
}

int main(void)
{
    printf("parent: starting threads\n");
    pthread_t t[2];
    struct job jobs[2] = { { &parent_acc, 10, 50000 }, { &parent_acc, 20, 50000 } };
    for (int i = 0; i < 2; i++)
        if (pthread_create(&t[i], NULL, work, &jobs[i]) != 0)
            return 1;

    printf("parent: forking\n");
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return 1;
    }
    if (pid == 0)
        exit(child_main());

    int status = 0;
    if (waitpid(pid, &status, 0) != pid) {
        perror("waitpid");
        return 1;
    }
    if (WIFEXITED(status))
        printf("parent: child exited with status %d\n", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        printf("parent: child killed by signal %d\n", WTERMSIG(status));

    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("parent: items=%ld total=%ld\n", parent_acc.items, parent_acc.total);
    return (WIFEXITED(status) && WEXITSTATUS(status) == 7) ? 0 : 1;
}
