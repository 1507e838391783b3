/* verdict: race-free
 * needs: spin
 * expect-exit: 0
 */
/* A task queue built from per-slot flags (no library synchronisation).
 * Task t goes to slot t % 4; slots 0 and 2 belong to consumer 0, slots 1
 * and 3 to consumer 1. The producer waits until the slot's previous task
 * is DONE, collects its result, writes the new input and release-stores
 * READY; the consumer spins until its slot is READY, computes, writes the
 * result and release-stores DONE. Every wait is a spinning read loop on
 * an acquire load (a plain "mov" in the binary) whose counterpart write is
 * the other thread's release store; the slot bodies are plain data handed
 * back and forth by those flags. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>

#define NSLOTS 4
#define NTASKS 64
enum { EMPTY, READY, DONE };

struct slot { int input; int output; };
struct slot tq_slots[NSLOTS];
atomic_int tq_state[NSLOTS];
long tq_total;

static void wait_for(int s, int want)
{
    while (atomic_load_explicit(&tq_state[s], memory_order_acquire) != want)
        sched_yield();
}

static void *consumer(void *arg)
{
    long me = (long)arg;
    for (int t = 0; t < NTASKS; t++) {
        int s = t % NSLOTS;
        if (s % 2 != me)
            continue;
        wait_for(s, READY);
        tq_slots[s].output = tq_slots[s].input * tq_slots[s].input;
        atomic_store_explicit(&tq_state[s], DONE, memory_order_release);
    }
    return NULL;
}

static void *producer(void *arg)
{
    (void)arg;
    for (int t = 0; t < NTASKS; t++) {
        int s = t % NSLOTS;
        if (t >= NSLOTS) {
            wait_for(s, DONE);
            tq_total += tq_slots[s].output;
        }
        tq_slots[s].input = t;
        atomic_store_explicit(&tq_state[s], READY, memory_order_release);
    }
    for (int s = 0; s < NSLOTS; s++) {
        wait_for(s, DONE);
        tq_total += tq_slots[s].output;
    }
    return NULL;
}

int main(void)
{
    pthread_t c0, c1, p;
    pthread_create(&c0, NULL, consumer, (void *)0L);
    pthread_create(&c1, NULL, consumer, (void *)1L);
    pthread_create(&p, NULL, producer, NULL);
    pthread_join(p, NULL);
    pthread_join(c0, NULL);
    pthread_join(c1, NULL);
    printf("spin_task_queue_flags: %ld\n", tq_total);
    return 0;
}
