/* threads_live.c: 2,000 threads alive at once (thread bookkeeping).
 * Each thread waits until all exist, adds to a mutex-protected total and
 * is joined. Usage: threads_live [threads] (default 2000). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t all_there = PTHREAD_COND_INITIALIZER;
static int started, wanted;
static long total;

static void *worker(void *arg)
{
	pthread_mutex_lock(&mu);
	if (++started == wanted)
		pthread_cond_broadcast(&all_there);
	while (started < wanted)
		pthread_cond_wait(&all_there, &mu);
	total += (long)arg;
	pthread_mutex_unlock(&mu);
	return NULL;
}

int main(int argc, char **argv)
{
	wanted = argc > 1 ? atoi(argv[1]) : 2000;
	pthread_t *t = calloc(wanted, sizeof *t);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (long i = 0; i < wanted; i++)
		if (pthread_create(&t[i], &attr, worker, (void *)i) != 0)
			return 1;
	for (int i = 0; i < wanted; i++)
		pthread_join(t[i], NULL);
	printf("threads_live: %d threads, total %ld\n", wanted, total);
	free(t);
	return 0;
}
