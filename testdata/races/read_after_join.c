/* verdict: race-free
 * expect-exit: 3
 */
/* The child writes child_answer; the parent reads it only after
 * pthread_join, which orders the child's writes before the read. The
 * program's exit status (3) is computed from the child's answer. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

int child_answer;
int child_steps[16];

static void *child(void *arg)
{
    (void)arg;
    for (int i = 0; i < 16; i++)
        child_steps[i] = i;
    child_answer = 45;
    return NULL;
}

int main(void)
{
    pthread_t t;
    pthread_create(&t, NULL, child, NULL);
    pthread_join(t, NULL);
    int sum = 0;
    for (int i = 0; i < 16; i++)
        sum += child_steps[i];
    printf("read_after_join: %d %d\n", child_answer, sum);
    return child_answer - 42;
}
