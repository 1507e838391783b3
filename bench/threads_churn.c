/* threads_churn.c: 16,000 short-lived threads, at most 8 alive (thread
 * ids and memory must not grow with every thread that ever lived). Each
 * batch of 8 threads fills its own slice of a buffer and is joined.
 * Usage: threads_churn [threads] (default 16000). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define BATCH 8

static long buf[BATCH][256];

static void *worker(void *arg)
{
	long *slice = arg;
	for (int i = 0; i < 256; i++)
		slice[i] += i;
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 16000;
	pthread_t t[BATCH];
	for (int done = 0; done < n; done += BATCH) {
		for (int i = 0; i < BATCH; i++)
			if (pthread_create(&t[i], NULL, worker, buf[i]) != 0)
				return 1;
		for (int i = 0; i < BATCH; i++)
			pthread_join(t[i], NULL);
	}
	long sum = 0;
	for (int i = 0; i < BATCH; i++)
		for (int j = 0; j < 256; j++)
			sum += buf[i][j];
	printf("threads_churn: %d threads, sum %ld\n", n, sum);
	return 0;
}
