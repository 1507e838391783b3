/* verdict: race-free
 * expect-exit: 0
 */
/* main initialises lookup_table once, then four threads only read it
 * (concurrent reads never race); each thread writes only its own slot of
 * partial_sums, which main reads after joining. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

#define NT 4
#define N 256
int lookup_table[N];
long partial_sums[NT];

static void *reader(void *arg)
{
    long id = (long)arg;
    long s = 0;
    for (int round = 0; round < 20; round++)
        for (int i = 0; i < N; i++)
            s += lookup_table[(i + (int)id) % N];
    partial_sums[id] = s;
    return NULL;
}

int main(void)
{
    pthread_t t[NT];
    for (int i = 0; i < N; i++)
        lookup_table[i] = i % 17;
    for (long i = 0; i < NT; i++)
        pthread_create(&t[i], NULL, reader, (void *)i);
    long total = 0;
    for (int i = 0; i < NT; i++) {
        pthread_join(t[i], NULL);
        total += partial_sums[i];
    }
    printf("init_then_readonly: %ld\n", total);
    return 0;
}
