/* verdict: race
 * racy: result_slot
 * needs: spin
 * expect-exit: 0
 */
/* The consumer spins on *flag and then stores through out, a different
 * pointer that unoptimised code loads into the same register as flag
 * (`mov (%rax)`). A store through the same address expression as a spin
 * load may be the flag's counterpart write, but it must still be checked
 * as a write: main stores to result_slot too, unordered with the
 * consumer's store (the flag orders only what comes before it in main). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

int go_flag;
int result_slot;

__attribute__((noinline)) static void consume(int *flag, int *out)
{
    while (!__atomic_load_n(flag, __ATOMIC_ACQUIRE))
        ;
    *out = 1;
}

static void *consumer(void *arg)
{
    (void)arg;
    consume(&go_flag, &result_slot);
    return NULL;
}

int main(void)
{
    pthread_t t;
    pthread_create(&t, NULL, consumer, NULL);
    __atomic_store_n(&go_flag, 1, __ATOMIC_RELEASE);
    result_slot = 2;
    pthread_join(t, NULL);
    printf("done\n");
    return 0;
}
