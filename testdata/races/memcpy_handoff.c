/* verdict: race-free
 * needs: lib
 * expect-exit: 0
 */
/* The producer memcpy's a record into handoff_buf and then posts a
 * semaphore; the consumer waits for it and memcpy's the record out. The
 * copy length is a run-time value, so libc's memcpy is called at every
 * optimisation level and must be intercepted as a write (producer) and a
 * read (consumer) of handoff_buf. */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <string.h>

#define LEN 2048
unsigned char handoff_buf[LEN];
size_t handoff_len = LEN;
sem_t handoff_ready;
unsigned long handoff_checksum;

static void *producer(void *arg)
{
    unsigned char local[LEN];
    (void)arg;
    for (int i = 0; i < LEN; i++)
        local[i] = (unsigned char)(i * 7);
    memcpy(handoff_buf, local, handoff_len);
    sem_post(&handoff_ready);
    return NULL;
}

static void *consumer(void *arg)
{
    unsigned char local[LEN];
    (void)arg;
    sem_wait(&handoff_ready);
    memcpy(local, handoff_buf, handoff_len);
    unsigned long sum = 0;
    for (int i = 0; i < LEN; i++)
        sum += local[i];
    handoff_checksum = sum;
    return NULL;
}

int main(void)
{
    pthread_t p, c;
    sem_init(&handoff_ready, 0, 0);
    pthread_create(&c, NULL, consumer, NULL);
    pthread_create(&p, NULL, producer, NULL);
    pthread_join(p, NULL);
    pthread_join(c, NULL);
    printf("memcpy_handoff: %lu\n", handoff_checksum);
    return 0;
}
