/* verdict: race-free
 * expect-exit: 0
 */
/* Ping-pong over two mailboxes where every access to a mailbox flag is a
 * sequentially consistent read-modify-write or store (gcc emits "xchg" for
 * both on x86-64: a locked instruction). The receiver polls with
 * atomic_exchange(&box, 0), which modifies the flag, so this is not a
 * spinning *read* loop; the happens-before edges come from the atomic
 * read-modify-writes themselves. ping_data/pong_data are non-atomic and
 * handed over by those edges. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>

#define ROUNDS 100
atomic_int ping_box, pong_box;
int ping_data, pong_data;
long pong_total;

static void *pinger(void *arg)
{
    (void)arg;
    for (int r = 0; r < ROUNDS; r++) {
        ping_data = r;
        atomic_store(&ping_box, 1);
        while (atomic_exchange(&pong_box, 0) == 0)
            sched_yield();
        pong_total += pong_data;
    }
    return NULL;
}

static void *ponger(void *arg)
{
    (void)arg;
    for (int r = 0; r < ROUNDS; r++) {
        while (atomic_exchange(&ping_box, 0) == 0)
            sched_yield();
        pong_data = ping_data * 2;
        atomic_store(&pong_box, 1);
    }
    return NULL;
}

int main(void)
{
    pthread_t a, b;
    pthread_create(&a, NULL, pinger, NULL);
    pthread_create(&b, NULL, ponger, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("atomic_exchange_handoff: %ld\n", pong_total);
    return 0;
}
