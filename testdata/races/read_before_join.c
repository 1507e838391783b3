/* verdict: race
 * racy: child_result
 * expect-exit: 0
 */
/* The parent reads child_result *before* pthread_join (it should have
 * joined first). Nothing orders the child's write and the parent's read,
 * whichever runs first. The value read is not printed. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

int child_result;

static void consume(int v) { __asm__ __volatile__("" : : "r"(v)); }

static void *child(void *arg)
{
    (void)arg;
    child_result = 42;
    return NULL;
}

int main(void)
{
    pthread_t t;
    pthread_create(&t, NULL, child, NULL);
    consume(child_result);      /* BUG: read before join */
    pthread_join(t, NULL);
    puts("read_before_join: done");
    return 0;
}
