/* verdict: race-free
 * expect-exit: 0
 */
/* The main thread fills create_params before pthread_create; the children
 * only read them. Thread creation orders everything the parent did before
 * pthread_create before everything the child does. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

#define NT 3
int create_params[NT][4];
long create_sums[NT];

static void *child(void *arg)
{
    long id = (long)arg;
    long s = 0;
    for (int i = 0; i < 4; i++)
        s += create_params[id][i];
    create_sums[id] = s;
    return NULL;
}

int main(void)
{
    pthread_t t[NT];
    for (long i = 0; i < NT; i++) {
        for (int j = 0; j < 4; j++)
            create_params[i][j] = (int)(i * 10 + j);
        pthread_create(&t[i], NULL, child, (void *)i);
    }
    for (int i = 0; i < NT; i++)
        pthread_join(t[i], NULL);
    printf("write_before_create: %ld %ld %ld\n", create_sums[0], create_sums[1], create_sums[2]);
    return 0;
}
