/* verdict: race
 * racy: hits
 * expect-exit: 0
 */
/* Two threads count under a hand-written spinlock (an atomic exchange to
 * take it, yielding while it is taken; a release store to drop it), and
 * each also bumps the count once more after dropping it: a common slip
 * when an unlock moves up. Whichever thread takes the lock second is
 * ordered after the other's unlock, not after the increment that follows
 * it, so that increment races with the second thread's locked one in
 * every schedule. At -O2 both increments and the unlock are one basic
 * block; a check of the first increment stood for the second until
 * 2026-11-27 (package elide: the unlock is a plain store, which the
 * runtime takes as a release), and the race was missed in every run. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>

static int lock_word;
int hits;

static void spin_lock(int *l)
{
    while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE))
        sched_yield();
}

static void spin_unlock(int *l) { __atomic_store_n(l, 0, __ATOMIC_RELEASE); }

static void *worker(void *arg)
{
    (void)arg;
    spin_lock(&lock_word);
    hits++;
    spin_unlock(&lock_word);
    hits++;
    return NULL;
}

int main(void)
{
    pthread_t a, b;
    pthread_create(&a, NULL, worker, NULL);
    pthread_create(&b, NULL, worker, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("done\n");
    return 0;
}
