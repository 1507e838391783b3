/* verdict: race-free
 * expect-exit: 0
 */
/* Eight threads each write only their own byte of char_slots: all eight
 * bytes share one 8-byte word. Distinct bytes are distinct memory
 * locations in C11, so a detector with word-granular shadow state must not
 * report them. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

#define NT 8
char char_slots[NT];

static void *worker(void *arg)
{
    long id = (long)arg;
    for (int i = 0; i < 1000; i++)
        char_slots[id] = (char)('a' + (id + i) % 26);
    return NULL;
}

int main(void)
{
    pthread_t t[NT];
    for (long i = 0; i < NT; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < NT; i++)
        pthread_join(t[i], NULL);
    printf("adjacent_char_array: %.8s\n", char_slots);
    return 0;
}
