/* verdict: race
 * racy: shared_buf
 * needs: lib
 * expect-exit: 0
 */
/* One thread clears shared_buf with memset while another stores one byte
 * into it, unsynchronised. At -O0 gcc calls libc's memset (the detector
 * must intercept it); at -O2 it inlines "rep stosq" (a string instruction
 * in the executable). Either way the clear and the store race. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>

char shared_buf[4096];

static void *clearer(void *arg)
{
    (void)arg;
    memset(shared_buf, 0, sizeof shared_buf);
    return NULL;
}

static void *scribbler(void *arg)
{
    (void)arg;
    shared_buf[100] = 'x';      /* BUG: races with the memset */
    return NULL;
}

int main(void)
{
    pthread_t a, b;
    pthread_create(&a, NULL, clearer, NULL);
    pthread_create(&b, NULL, scribbler, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    puts("memset_vs_write_race: done");
    return 0;
}
