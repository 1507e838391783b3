/* verdict: race-free
 * needs: lib
 * expect-exit: 0
 */
/* A POSIX semaphore pair hands a message buffer back and forth: the
 * producer fills sem_message and posts msg_full; the consumer waits for it,
 * reads and rewrites the buffer, and posts msg_empty. Each access is
 * ordered by the post/wait that precedes it. */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>

#define ROUNDS 50
struct message { int seq; int body[8]; } sem_message;
sem_t msg_full, msg_empty;
long consumer_sum;

static void *producer(void *arg)
{
    (void)arg;
    for (int r = 0; r < ROUNDS; r++) {
        sem_wait(&msg_empty);
        sem_message.seq = r;
        for (int i = 0; i < 8; i++)
            sem_message.body[i] = r * i;
        sem_post(&msg_full);
    }
    return NULL;
}

static void *consumer(void *arg)
{
    (void)arg;
    for (int r = 0; r < ROUNDS; r++) {
        sem_wait(&msg_full);
        for (int i = 0; i < 8; i++) {
            consumer_sum += sem_message.body[i];
            sem_message.body[i] = -1;
        }
        sem_post(&msg_empty);
    }
    return NULL;
}

int main(void)
{
    pthread_t p, c;
    sem_init(&msg_full, 0, 0);
    sem_init(&msg_empty, 0, 1);
    pthread_create(&p, NULL, producer, NULL);
    pthread_create(&c, NULL, consumer, NULL);
    pthread_join(p, NULL);
    pthread_join(c, NULL);
    printf("semaphore_handoff: %ld\n", consumer_sum);
    return 0;
}
