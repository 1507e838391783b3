/* verdict: race-free
 * needs: lib
 * expect-exit: 0
 */
/* Two readers read rw_table under pthread_rwlock_rdlock while a writer
 * updates it under pthread_rwlock_wrlock. Reads may run in parallel with
 * each other, never with a write. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

#define N 16
int rw_table[N];
pthread_rwlock_t table_lock = PTHREAD_RWLOCK_INITIALIZER;

static void consume(long v) { __asm__ __volatile__("" : : "r"(v)); }

static void *reader(void *arg)
{
    (void)arg;
    for (int round = 0; round < 200; round++) {
        long sum = 0;
        pthread_rwlock_rdlock(&table_lock);
        for (int i = 0; i < N; i++)
            sum += rw_table[i];
        pthread_rwlock_unlock(&table_lock);
        consume(sum);
    }
    return NULL;
}

static void *writer(void *arg)
{
    (void)arg;
    for (int round = 0; round < 200; round++) {
        pthread_rwlock_wrlock(&table_lock);
        rw_table[round % N] += 1;
        pthread_rwlock_unlock(&table_lock);
    }
    return NULL;
}

int main(void)
{
    pthread_t r1, r2, w;
    pthread_create(&r1, NULL, reader, NULL);
    pthread_create(&r2, NULL, reader, NULL);
    pthread_create(&w, NULL, writer, NULL);
    pthread_join(r1, NULL);
    pthread_join(r2, NULL);
    pthread_join(w, NULL);
    long sum = 0;
    for (int i = 0; i < N; i++)
        sum += rw_table[i];
    printf("rwlock_correct: %ld\n", sum);
    return 0;
}
