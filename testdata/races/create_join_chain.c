/* verdict: race-free
 * expect-exit: 0
 */
/* A work record is handed along a chain of threads using only
 * pthread_create and pthread_join: main -> stage 1 -> (join) main ->
 * stage 2, which itself creates stage 3 and joins it -> (join) main. Each
 * stage reads and rewrites all of chain_record; the hand-offs are ordered
 * transitively by create/join edges. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

struct record { int stage; long values[8]; } chain_record;

static void step(int stage)
{
    chain_record.stage = stage;
    for (int i = 0; i < 8; i++)
        chain_record.values[i] = chain_record.values[i] * 2 + stage;
}

static void *stage3(void *arg)
{
    (void)arg;
    step(3);
    return NULL;
}

static void *stage2(void *arg)
{
    pthread_t t;
    (void)arg;
    step(2);
    pthread_create(&t, NULL, stage3, NULL);
    pthread_join(t, NULL);
    step(4);
    return NULL;
}

static void *stage1(void *arg)
{
    (void)arg;
    step(1);
    return NULL;
}

int main(void)
{
    pthread_t t;
    for (int i = 0; i < 8; i++)
        chain_record.values[i] = i;
    pthread_create(&t, NULL, stage1, NULL);
    pthread_join(t, NULL);
    pthread_create(&t, NULL, stage2, NULL);
    pthread_join(t, NULL);
    step(5);
    printf("create_join_chain: stage %d first %ld last %ld\n", chain_record.stage,
           chain_record.values[0], chain_record.values[7]);
    return 0;
}
