/* Threads with names, created through a wrapper function: reports name
 * each racing thread, show the creator's whole stack (spawn, then main),
 * and give calls (pthread_create, malloc) the line of the call, not the
 * line after it. The lines cmd/hgrewrite's TestThreadNamesAndStacks
 * checks are marked with comments it looks for.
 *
 * Two races: worker and helper write block[1] (a heap block), and main
 * and worker write counter. main names itself (a name of more than 15
 * bytes is refused and changes nothing), worker names itself with prctl,
 * and main names helper through its pthread_t before helper writes. */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>

int *block;
int counter;
static sem_t named;

static void *worker(void *arg)
{
    (void)arg;
    prctl(PR_SET_NAME, "worker");
    block[1] = 1;
    counter++;
    return NULL;
}

static void *helper(void *arg)
{
    (void)arg;
    sem_wait(&named);
    block[1] = 2;
    return NULL;
}

__attribute__((noinline)) static pthread_t spawn(void *(*fn)(void *))
{
    pthread_t th;
    pthread_create(&th, NULL, fn, NULL); /* create-call */
    return th;
}

int main(void)
{
    pthread_setname_np(pthread_self(), "boss");
    if (pthread_setname_np(pthread_self(), "a-name-of-20-bytes") == 0)
        return 3;
    sem_init(&named, 0, 0);
    block =
        malloc(4 * sizeof *block); /* malloc-call */
    pthread_t w = spawn(worker); /* main-calls-spawn */
    pthread_t h = spawn(helper);
    if (pthread_setname_np(h, "helper") != 0)
        return 4;
    sem_post(&named);
    counter++;
    pthread_join(w, NULL);
    pthread_join(h, NULL);
    printf("%d %d\n", block[1], counter);
    free(block);
    return 0;
}
