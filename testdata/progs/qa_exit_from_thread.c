/* expect-exit: 3 */
/* exit() from a thread other than main while main waits in
 * pthread_join and two more threads are busy: atexit handlers run on the
 * exiting thread and the process ends with its status. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static long counter;

static void at_exit(void)
{
    pthread_mutex_lock(&mu);
    printf("qa_exit_from_thread: atexit ran, counter positive: %d\n", counter > 0);
    pthread_mutex_unlock(&mu);
}

static void *busy(void *arg)
{
    for (;;) {
        pthread_mutex_lock(&mu);
        counter++;
        pthread_mutex_unlock(&mu);
        usleep(100);
    }
    return arg;
}

static void *quitter(void *arg)
{
    usleep(20000);
    exit(3);
    return arg;
}

int main(void)
{
    atexit(at_exit);
    pthread_t b1, b2, q;
    pthread_create(&b1, NULL, busy, NULL);
    pthread_create(&b2, NULL, busy, NULL);
    pthread_create(&q, NULL, quitter, NULL);
    pthread_join(b1, NULL); /* never returns: the quitter ends the process */
    return 0;
}
