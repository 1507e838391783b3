/* Three threads, one after the other, each hold one mutex of a ring and
 * take the next: a -> b, b -> c, c -> a. No two of them form a cycle;
 * the three do (each could wait for the next's lock).
 * Expected: one lock-order inversion of three mutexes 'ma', 'mb', 'mc'. */
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t ma = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t mb = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t mc = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t *ring[3] = {&ma, &mb, &mc};
static long taken[3];

static void *hold_then_next(void *arg)
{
	long i = (long)arg;
	pthread_mutex_lock(ring[i]);
	pthread_mutex_lock(ring[(i + 1) % 3]);
	taken[i]++;
	pthread_mutex_unlock(ring[(i + 1) % 3]);
	pthread_mutex_unlock(ring[i]);
	return NULL;
}

int main(void)
{
	for (long i = 0; i < 3; i++) {
		pthread_t t;
		pthread_create(&t, NULL, hold_then_next, (void *)i);
		pthread_join(t, NULL);
	}
	printf("taken=%ld %ld %ld\n", taken[0], taken[1], taken[2]);
	return 0;
}
