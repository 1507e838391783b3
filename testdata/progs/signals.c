/* expect-exit: 0 */
/* Signal handling: SIGUSR1 handler installed with sigaction touches a
 * volatile sig_atomic_t and a global array; delivered via raise() and
 * kill(getpid()). A SIGSEGV handler recovers from a deliberate NULL write
 * with sigsetjmp/siglongjmp. No timers are used. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

static volatile sig_atomic_t usr1_count;
static volatile int usr1_log[32];
static volatile sig_atomic_t segv_count;
static volatile sig_atomic_t segv_addr_null;
static sigjmp_buf segv_env;
volatile int *volatile fault_ptr; /* stays NULL; volatile so gcc cannot fold it */

static void usr1_handler(int sig)
{
    int n = usr1_count;
    if (n < 32)
        usr1_log[n] = sig * 100 + n;
    usr1_count = n + 1;
}

static void segv_handler(int sig, siginfo_t *si, void *uctx)
{
    (void)uctx;
    segv_count++;
    segv_addr_null = (si->si_addr == NULL) && sig == SIGSEGV;
    siglongjmp(segv_env, segv_count);
}

__attribute__((noinline)) static void do_null_write(int v)
{
    volatile int *p = fault_ptr;
    *p = v; /* deliberate fault: fault_ptr is always NULL */
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = usr1_handler;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    if (sigaction(SIGUSR1, &sa, NULL) != 0) {
        printf("sigaction USR1 failed\n");
        return 1;
    }

    struct sigaction sb;
    memset(&sb, 0, sizeof sb);
    sb.sa_sigaction = segv_handler;
    sigemptyset(&sb.sa_mask);
    sb.sa_flags = SA_SIGINFO | SA_NODEFER;
    if (sigaction(SIGSEGV, &sb, NULL) != 0) {
        printf("sigaction SEGV failed\n");
        return 1;
    }

    for (int i = 0; i < 5; i++)
        raise(SIGUSR1);
    printf("after raise x5: usr1_count=%d\n", (int)usr1_count);
    for (int i = 0; i < 5; i++)
        kill(getpid(), SIGUSR1);
    printf("after kill x5: usr1_count=%d\n", (int)usr1_count);

    /* blocked signal is delivered once when unblocked */
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigprocmask(SIG_BLOCK, &set, &old);
    raise(SIGUSR1);
    raise(SIGUSR1);
    printf("while blocked: usr1_count=%d\n", (int)usr1_count);
    sigprocmask(SIG_SETMASK, &old, NULL);
    printf("after unblock: usr1_count=%d\n", (int)usr1_count);

    long logsum = 0;
    for (int i = 0; i < usr1_count && i < 32; i++)
        logsum += usr1_log[i];
    printf("usr1 log sum: %ld\n", logsum);

    volatile int recovered = 0;
    for (volatile int round = 0; round < 3; round++) {
        int r = sigsetjmp(segv_env, 1);
        if (r == 0) {
            do_null_write(round + 1);
            printf("round %d: no fault?!\n", (int)round);
        } else {
            recovered++;
            printf("round %d: recovered from SIGSEGV (jmp value %d)\n", (int)round, r);
        }
    }
    printf("segv_count=%d recovered=%d addr_was_null=%d\n",
           (int)segv_count, (int)recovered, (int)segv_addr_null);

    /* handler still works after siglongjmp out of a handler */
    raise(SIGUSR1);
    printf("final usr1_count=%d\n", (int)usr1_count);
    return (segv_count == 3 && usr1_count == 12) ? 0 : 1;
}
