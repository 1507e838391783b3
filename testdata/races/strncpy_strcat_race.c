/* verdict: race
 * racy: label
 * expect-exit: 0
 */
/* A worker builds a label with strncpy and strcat while main compares it
 * with strncmp; nothing orders the two threads' uses of label (main's
 * comparison is not waited for by the worker, nor the other way round).
 * The string functions run inside glibc, which is not rewritten: the race
 * is seen only because the runtime treats them as range accesses.
 * other_label is written by the worker with strncat but only read by main
 * after pthread_join: not racy. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char label[32];
static char other_label[32];
static const char words[] = "gamma-delta";
static volatile size_t take = 5;

static void *worker(void *arg)
{
    (void)arg;
    strncpy(label, "alpha", sizeof label);
    strcat(label, "-beta");
    strncat(other_label, words, take); /* "gamma" */
    return NULL;
}

int main(void)
{
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    usleep(50 * 1000);
    int same = strncmp(label, "alpha-beta", sizeof label) == 0;
    pthread_join(t, NULL);
    printf("%s %s\n", same ? "same" : "different", other_label);
    return 0;
}
