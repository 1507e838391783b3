/* verdict: race
 * racy: hits_total
 * expect-exit: 0
 */
/* Two workers count into one total without a lock; the main thread joins
 * them, prints, flushes and leaves with _exit(0) (as lbzip2 does), which
 * skips the destructors. The report, the summary and the exit status 66
 * must still come. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

long hits_total;

static void *counter(void *arg)
{
    (void)arg;
    for (int i = 0; i < 1000; i++)
        hits_total++; /* BUG: no lock */
    return NULL;
}

int main(void)
{
    pthread_t a, b;
    pthread_create(&a, NULL, counter, NULL);
    pthread_create(&b, NULL, counter, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("underscore_exit_race: done\n");
    fflush(stdout);
    _exit(0);
}
