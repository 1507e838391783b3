/* verdict: race
 * racy: GLOB
 * figure: dissertation fig. 3.8
 * expect-exit: 0
 */
/* Fig. 3.8: main writes GLOB after creating the worker, the worker reads
 * it; there is no synchronisation between them except the final join. If
 * main writes first, Eraser's state machine ends in Shared-Read without a
 * warning (the missed race); a happens-before check sees the race in
 * either order. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

int GLOB = 0;

static void consume(int v) { __asm__ __volatile__("" : : "r"(v)); }

static void *worker(void *arg)
{
    (void)arg;
    consume(GLOB);              /* printf(GLOB) */
    return NULL;
}

int main(void)
{
    pthread_t threadid;
    pthread_create(&threadid, NULL, worker, NULL);
    GLOB = 1;
    pthread_join(threadid, NULL);
    puts("eraser_missed_race_fig3_8: done");
    return 0;
}
