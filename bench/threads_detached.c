/* threads_detached.c: 16,000 detached threads, a thread per request as
 * simple servers do, at most 8 in flight: each fills its request's slice
 * and signals completion under a mutex; nobody joins them (thread ids and
 * memory must stay bounded all the same).
 * Usage: threads_detached [threads] (default 16000). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define INFLIGHT 8

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int running, finished;
static long slots[INFLIGHT][64];

static void *handle_request(void *arg)
{
	long *slot = arg;
	for (int i = 0; i < 64; i++)
		slot[i] += i;
	pthread_mutex_lock(&mu);
	running--;
	finished++;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&mu);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 16000;
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	for (int i = 0; i < n; i += INFLIGHT) {
		pthread_mutex_lock(&mu);
		while (running > 0) /* a batch at a time: each slot has one owner */
			pthread_cond_wait(&cv, &mu);
		running = INFLIGHT;
		pthread_mutex_unlock(&mu);
		for (int k = 0; k < INFLIGHT; k++) {
			pthread_t t;
			if (pthread_create(&t, &attr, handle_request, slots[k]) != 0)
				return 1;
		}
	}
	pthread_mutex_lock(&mu);
	while (running > 0)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	long sum = 0;
	for (int k = 0; k < INFLIGHT; k++)
		for (int i = 0; i < 64; i++)
			sum += slots[k][i];
	printf("threads_detached: %d requests, sum %ld\n", finished, sum);
	return 0;
}
