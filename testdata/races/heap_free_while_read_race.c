/* verdict: race
 * racy: heap:make_record
 * expect-exit: 0
 */
/* A worker thread reads a heap record (made by make_record) while main
 * frees it: main never waits for the worker before free(), so the
 * worker's read and the release are unordered. A free is a write to the
 * whole block (ThreadSanitizer and Helgrind+ treat it so): the report must
 * name the block. The worker reads the record before main frees it
 * (the sleep only forces that order, which makes the program safe to run:
 * the freed memory is never read); the race is the missing
 * synchronisation between the read and the free. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct record {
    int id;
    int value;
};

static volatile int seen;

__attribute__((noinline)) static struct record *make_record(void)
{
    struct record *r = malloc(sizeof *r);
    if (!r)
        abort();
    r->id = 7;
    r->value = 42;
    return r;
}

static void *reader(void *arg)
{
    struct record *r = arg;
    seen = r->value;
    return NULL;
}

int main(void)
{
    struct record *r = make_record();
    pthread_t t;
    pthread_create(&t, NULL, reader, r);
    usleep(100 * 1000);
    free(r);
    pthread_join(t, NULL);
    printf("seen %d\n", seen);
    return 0;
}
