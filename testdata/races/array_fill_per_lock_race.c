/* verdict: race
 * racy: fill_race_slots
 * needs: lib
 * expect-exit: 0
 */
/* Like array_fill_per_lock.c, but the monitor reads the first element
 * without the mutex: its read and the filler's write of that element are
 * unordered in every schedule. The filler's later writes go to the other
 * half of the element's 8-byte granule, in later segments; the write of
 * the first element must stay in the granule's history to be named. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

#define SLOTS 8
static pthread_mutex_t fill_race_mu = PTHREAD_MUTEX_INITIALIZER;
static int fill_race_slots[SLOTS];

static void consume(int v) { __asm__ volatile("" : : "r"(v)); }

static void *filler(void *arg)
{
    (void)arg;
    for (int i = 0; i < SLOTS; i++) {
        pthread_mutex_lock(&fill_race_mu);
        fill_race_slots[i] = i + 1;
        pthread_mutex_unlock(&fill_race_mu);
    }
    return NULL;
}

static void *monitor(void *arg)
{
    (void)arg;
    consume(fill_race_slots[0]);
    return NULL;
}

int main(void)
{
    pthread_t f, m;
    pthread_create(&f, NULL, filler, NULL);
    pthread_create(&m, NULL, monitor, NULL);
    pthread_join(f, NULL);
    pthread_join(m, NULL);
    printf("array_fill_per_lock_race: %d\n", fill_race_slots[SLOTS - 1]);
    return 0;
}
