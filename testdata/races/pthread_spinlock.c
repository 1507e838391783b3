/* verdict: race-free
 * needs: lib
 * expect-exit: 0
 */
/* A pthread_spinlock_t protects spin_total. glibc implements
 * pthread_spin_lock as a spinning loop inside libc, which a detector that
 * only instruments the executable never sees: it must know the primitive. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

long spin_total;
pthread_spinlock_t total_lock;

static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 1000; i++) {
        pthread_spin_lock(&total_lock);
        spin_total += 2;
        pthread_spin_unlock(&total_lock);
    }
    return NULL;
}

int main(void)
{
    pthread_t t1, t2;
    pthread_spin_init(&total_lock, PTHREAD_PROCESS_PRIVATE);
    pthread_create(&t1, NULL, worker, NULL);
    pthread_create(&t2, NULL, worker, NULL);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    pthread_spin_destroy(&total_lock);
    printf("pthread_spinlock: %ld\n", spin_total);
    return spin_total == 4000 ? 0 : 1;
}
