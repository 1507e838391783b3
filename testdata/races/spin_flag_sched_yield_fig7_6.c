/* verdict: race-free
 * figure: dissertation fig. 7.6
 * needs: spin
 * expect-exit: 0
 */
/* Fig. 7.6: main spins on the plain volatile int spinlock, calling
 * sched_yield in the loop body, until the worker stores 0. Added to the
 * figure: the worker first writes spin_payload, which main reads after the
 * loop, so a detector that misses the spinning read loop also reports an
 * apparent race on spin_payload. (The empty asm statements are compiler
 * barriers that keep the plain accesses on their side of the flag
 * access; x86-64 keeps the order in hardware.) The detector should report
 * neither spinlock (an intentional synchronisation race) nor spin_payload.
 * ThreadSanitizer follows C11 and reports both. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>

volatile int spinlock = 1;
int spin_payload;

static void *run_pm(void *arg)
{
    (void)arg;
    spin_payload = 1234;
    __asm__ __volatile__("" ::: "memory");
    spinlock = 0;
    return NULL;
}

int main(void)
{
    pthread_t threadid;
    pthread_create(&threadid, NULL, &run_pm, NULL);

    while (spinlock != 0) {
        sched_yield();
    }
    __asm__ __volatile__("" ::: "memory");
    int seen = spin_payload;

    pthread_join(threadid, NULL);
    printf("spin_flag_sched_yield_fig7_6: %d\n", seen);
    return 0;
}
