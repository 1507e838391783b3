/* verdict: race
 * racy: result_byte
 * needs: spin
 * expect-exit: 0
 */
/* A one-byte spin flag sits next to a one-byte result. The worker sets
 * the flag and only then writes the result; main waits for the flag and
 * writes the result too: the two result writes are unordered. The stores
 * to the neighbour must not be taken for counterpart writes of the flag
 * (they do not overlap it), so the race on result_byte is reported and the
 * flag itself is not. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

volatile char ready_byte;
char result_byte;

static void *worker(void *arg)
{
    (void)arg;
    ready_byte = 1;
    result_byte = 'w';
    return NULL;
}

int main(void)
{
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    while (!ready_byte)
        ;
    result_byte = 'm';
    pthread_join(t, NULL);
    printf("%c\n", result_byte);
    return 0;
}
