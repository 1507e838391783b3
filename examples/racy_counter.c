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

long counter;                 /* racy: no lock */
long hits;                    /* protected by lock */
pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < ROUNDS; i++) {
		counter++;
		pthread_mutex_lock(&lock);
		hits++;
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

int main(void)
{
	pthread_t a, b;
	pthread_create(&a, NULL, worker, NULL);
	pthread_create(&b, NULL, worker, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("hits = %ld (expected %d)\n", hits, 2 * ROUNDS);
	printf("counter = %ld (racy: often less than %d)\n", counter, 2 * ROUNDS);
	return 0;
}
