/* verdict: race-free
 * needs: lib
 * expect-exit: 0
 */
/* main and a worker update total under a mutex, so total becomes shared
 * with the lockset {mu} and the threadset {main, worker}. After
 * pthread_join, main updates total without the lock, several times. The
 * join rule of dissertation ch. 5.1.2 (applied lazily, when the cell is
 * next touched) returns total to an exclusive state owned by main; the
 * happens-before edge of the join orders the accesses as well, so this
 * program checks that the lazy join path keeps a correct program quiet in
 * both machines rather than telling the two mechanisms apart (in the
 * hybrid algorithm they differ only when the joined thread's accesses reach
 * the survivor through locks alone). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static long total;

static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 1000; i++) {
        pthread_mutex_lock(&mu);
        total += 2;
        pthread_mutex_unlock(&mu);
    }
    return NULL;
}

int main(void)
{
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    for (int i = 0; i < 1000; i++) {
        pthread_mutex_lock(&mu);
        total += 1;
        pthread_mutex_unlock(&mu);
    }
    pthread_join(t, NULL);
    for (int i = 0; i < 5; i++) {
        total *= 2;
        __asm__ volatile("" ::: "memory");
    }
    printf("total %ld\n", total);
    return 0;
}
