/* verdict: race-free
 * expect-exit: 0
 */
/* Four threads each write only their own element of int_slots (adjacent
 * 4-byte elements in one cache line). False sharing is a performance
 * issue, not a race. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

#define NT 4
int int_slots[NT];

static void *worker(void *arg)
{
    long id = (long)arg;
    for (int i = 0; i < 1000; i++)
        int_slots[id] += (int)id + 1;
    return NULL;
}

int main(void)
{
    pthread_t t[NT];
    for (long i = 0; i < NT; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < NT; i++)
        pthread_join(t[i], NULL);
    printf("adjacent_int_array: %d %d %d %d\n", int_slots[0], int_slots[1], int_slots[2],
           int_slots[3]);
    return 0;
}
