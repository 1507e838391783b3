/* big_and_many.c: thousands of short threads and a large heap block.
 * 3,000 threads are created in batches of 50; each adds to a
 * mutex-protected counter and fills a heap block of its own. Then two
 * threads fill the two halves of a 64 MiB block. Race-free: exit 0, no
 * report, printed totals fixed. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 3000
#define BATCH 50
#define BIG (64u << 20)

static long total;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static unsigned char *big;

static void *short_worker(void *arg)
{
	long id = (long)arg;
	int *mine = malloc(64 * sizeof *mine);
	for (int i = 0; i < 64; i++)
		mine[i] = (int)id + i;
	long s = 0;
	for (int i = 0; i < 64; i++)
		s += mine[i];
	free(mine);
	pthread_mutex_lock(&mu);
	total += s;
	pthread_mutex_unlock(&mu);
	return NULL;
}

static void *fill_half(void *arg)
{
	long half = (long)arg;
	unsigned char *p = big + half * (BIG / 2);
	for (size_t i = 0; i < BIG / 2; i += 64)
		p[i] = (unsigned char)(i >> 6);
	return NULL;
}

int main(void)
{
	pthread_t t[BATCH];
	for (long b = 0; b < THREADS / BATCH; b++) {
		for (long i = 0; i < BATCH; i++)
			pthread_create(&t[i], NULL, short_worker, (void *)(b * BATCH + i));
		for (int i = 0; i < BATCH; i++)
			pthread_join(t[i], NULL);
	}
	big = malloc(BIG);
	memset(big, 0, BIG);
	pthread_t h[2];
	for (long i = 0; i < 2; i++)
		pthread_create(&h[i], NULL, fill_half, (void *)i);
	for (int i = 0; i < 2; i++)
		pthread_join(h[i], NULL);
	unsigned long sum = 0;
	for (size_t i = 0; i < BIG; i += 4096)
		sum += big[i];
	free(big);
	printf("big_and_many: total %ld, sum %lu\n", total, sum);
	return 0;
}
