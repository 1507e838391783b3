/* racy_counter.c: the example `make demo` rewrites.
 *
 * Two threads bump a shared counter. `hits` is protected by a mutex;
 * `counter` is not: that is a data race, and the final value is usually
 * less than 2 * ROUNDS. A race detector should name `counter` and stay quiet
 * about `hits`.
 */
#include <pthread.h>
#include <stdio.h>

#define ROUNDS 100000
#define WORKERS 2

long counter;                 /* racy: no lock */
long hits;                    /* protected by lock */
pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void bump(void)
{
	counter++;
	pthread_mutex_lock(&lock);
	hits++;
	pthread_mutex_unlock(&lock);
}

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < ROUNDS; i++)
		bump();
	return NULL;
}

static void start_workers(pthread_t *t)
{
	for (int i = 0; i < WORKERS; i++)
		pthread_create(&t[i], NULL, worker, NULL);
}

int main(void)
{
	pthread_t t[WORKERS];
	start_workers(t);
	for (int i = 0; i < WORKERS; i++)
		pthread_join(t[i], NULL);
	printf("hits = %ld (expected %d)\n", hits, WORKERS * ROUNDS);
	printf("counter = %ld (racy: often less than %d)\n", counter, WORKERS * ROUNDS);
	return 0;
}
