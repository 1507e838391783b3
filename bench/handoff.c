/* handoff.c: producers fill heap blocks and hand them to consumers through
 * a mutex and condition-variable queue; consumers read every word and free
 * the block (every block changes owner once, the hand-off-heavy case).
 * Usage: handoff [blocks] [words per block] (default 100000 64). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define CAP 256

static long *queue[CAP];
static int head, tail, count, producers_left = 2;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_empty = PTHREAD_COND_INITIALIZER, not_full = PTHREAD_COND_INITIALIZER;
static long blocks, words;

static void put(long *b)
{
	pthread_mutex_lock(&mu);
	while (count == CAP)
		pthread_cond_wait(&not_full, &mu);
	queue[tail] = b;
	tail = (tail + 1) % CAP;
	count++;
	pthread_cond_signal(&not_empty);
	pthread_mutex_unlock(&mu);
}

static long *take(void)
{
	pthread_mutex_lock(&mu);
	while (count == 0 && producers_left > 0)
		pthread_cond_wait(&not_empty, &mu);
	long *b = NULL;
	if (count > 0) {
		b = queue[head];
		head = (head + 1) % CAP;
		count--;
		pthread_cond_signal(&not_full);
	}
	pthread_mutex_unlock(&mu);
	return b;
}

static void *producer(void *arg)
{
	long seed = (long)arg;
	for (long i = 0; i < blocks / 2; i++) {
		long *b = malloc(words * sizeof *b);
		for (long w = 0; w < words; w++)
			b[w] = seed + i + w;
		put(b);
	}
	pthread_mutex_lock(&mu);
	producers_left--;
	pthread_cond_broadcast(&not_empty);
	pthread_mutex_unlock(&mu);
	return NULL;
}

static void *consumer(void *arg)
{
	long *sum = arg;
	for (long *b; (b = take()) != NULL;) {
		for (long w = 0; w < words; w++)
			*sum += b[w];
		free(b);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	blocks = argc > 1 ? atol(argv[1]) : 100000;
	words = argc > 2 ? atol(argv[2]) : 64;
	pthread_t p[2], c[2];
	long sums[2] = {0, 0};
	for (long i = 0; i < 2; i++)
		pthread_create(&p[i], NULL, producer, (void *)(i * 1000));
	for (int i = 0; i < 2; i++)
		pthread_create(&c[i], NULL, consumer, &sums[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(p[i], NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(c[i], NULL);
	printf("handoff: %ld\n", sums[0] + sums[1]);
	return 0;
}
