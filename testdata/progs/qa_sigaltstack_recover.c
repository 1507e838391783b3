/* expect-exit: 0 */
/* A SIGSEGV handler on an alternate signal stack recovers from deliberate
 * faults with siglongjmp, 100 times on the main thread and 100 times on a
 * second thread with its own alternate stack. */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

static __thread sigjmp_buf recover_to;
static __thread int faults;

static void on_segv(int sig)
{
    (void)sig;
    faults++;
    siglongjmp(recover_to, 1);
}

static void use_altstack(void)
{
    stack_t ss = {0};
    ss.ss_size = 64 * 1024;
    ss.ss_sp = malloc(ss.ss_size);
    sigaltstack(&ss, NULL);
}

static int provoke(int rounds)
{
    volatile int *bad = (int *)16;
    for (int i = 0; i < rounds; i++)
        if (sigsetjmp(recover_to, 1) == 0)
            *bad = i;
    return faults;
}

static void *thread_main(void *arg)
{
    use_altstack();
    *(int *)arg = provoke(100);
    return NULL;
}

int main(void)
{
    struct sigaction sa = {0};
    sa.sa_handler = on_segv;
    sa.sa_flags = SA_ONSTACK;
    sigaction(SIGSEGV, &sa, NULL);
    use_altstack();
    int theirs = 0;
    pthread_t t;
    pthread_create(&t, NULL, thread_main, &theirs);
    int mine = provoke(100);
    pthread_join(t, NULL);
    printf("qa_sigaltstack_recover: main %d, thread %d\n", mine, theirs);
    return 0;
}
