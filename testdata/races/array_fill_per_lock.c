/* verdict: race-free
 * needs: lib
 * expect-exit: 0
 */
/* A filler thread writes an int array one element per critical section;
 * a monitor reads the first element under the same mutex, before or
 * after the filler's write of it (the mutex orders the two either way).
 * The race variant reads it without the mutex. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

#define SLOTS 8
static pthread_mutex_t fill_mu = PTHREAD_MUTEX_INITIALIZER;
static int fill_slots[SLOTS];

static void *filler(void *arg)
{
    (void)arg;
    for (int i = 0; i < SLOTS; i++) {
        pthread_mutex_lock(&fill_mu);
        fill_slots[i] = i + 1;
        pthread_mutex_unlock(&fill_mu);
    }
    return NULL;
}

static void *monitor(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&fill_mu);
    int first = fill_slots[0];
    pthread_mutex_unlock(&fill_mu);
    return (void *)(long)(first >= 0);
}

int main(void)
{
    pthread_t f, m;
    void *seen;
    pthread_create(&f, NULL, filler, NULL);
    pthread_create(&m, NULL, monitor, NULL);
    pthread_join(f, NULL);
    pthread_join(m, &seen);
    printf("array_fill_per_lock: %ld %d\n", (long)seen, fill_slots[SLOTS - 1]);
    return 0;
}
