/* verdict: race-free
 * figure: dissertation fig. 7.4
 * needs: spin
 * expect-exit: 0
 */
/* Case (b) of ch. 7.2.2: the counterpart write happens first. Thread 1
 * writes DATA and sets the plain volatile FLAG immediately; thread 2
 * sleeps 20 ms, then reaches "while (FLAG == 0);" which evaluates its
 * condition once and exits without spinning. The detector must still
 * recognise the loop as a spinning read loop and draw the edge from the
 * earlier write of FLAG. ThreadSanitizer reports FLAG and DATA. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

volatile int FLAG = 0;
int DATA;

static void *thread_1(void *arg)
{
    (void)arg;
    DATA = 7;
    __asm__ __volatile__("" ::: "memory");
    FLAG = 1;
    return NULL;
}

static void *thread_2(void *arg)
{
    (void)arg;
    usleep(20000);              /* arrive after the write */
    while (FLAG == 0)
        ;
    __asm__ __volatile__("" ::: "memory");
    DATA = DATA * 6;
    return NULL;
}

int main(void)
{
    pthread_t t1, t2;
    pthread_create(&t1, NULL, thread_1, NULL);
    pthread_create(&t2, NULL, thread_2, NULL);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    printf("spin_flag_entered_after_write: %d\n", DATA);
    return 0;
}
