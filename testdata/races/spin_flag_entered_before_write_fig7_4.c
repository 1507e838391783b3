/* verdict: race-free
 * figure: dissertation fig. 7.4
 * needs: spin
 * expect-exit: 0
 */
/* Fig. 7.4 / fig. 7.2, case (a) of ch. 7.2.2: thread 2 enters the spinning
 * read loop "while (CONDITION == 0);" (empty body) before thread 1 writes
 * DATA and then CONDITION (thread 1 sleeps 20 ms first to force the
 * order). The counterpart write ends the spin; the detector must draw the
 * edge write(CONDITION) -> loop exit and so report neither the intentional
 * race on CONDITION nor an apparent race on DATA. CONDITION is a plain
 * volatile int as in the dissertation; ThreadSanitizer reports CONDITION
 * and DATA. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

volatile int CONDITION = 0;
int DATA;

static void *thread_1(void *arg)
{
    (void)arg;
    usleep(20000);              /* let thread 2 start spinning */
    DATA = 42;
    __asm__ __volatile__("" ::: "memory");
    CONDITION = 1;
    return NULL;
}

static void *thread_2(void *arg)
{
    (void)arg;
    while (CONDITION == 0)
        ;
    __asm__ __volatile__("" ::: "memory");
    DATA = DATA + 1;
    return NULL;
}

int main(void)
{
    pthread_t t1, t2;
    pthread_create(&t1, NULL, thread_1, NULL);
    pthread_create(&t2, NULL, thread_2, NULL);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    printf("spin_flag_entered_before_write_fig7_4: %d\n", DATA);
    return 0;
}
