/* stress.c: N rounds of memory work by 8 threads, with lock-protected
 * updates and one unprotected counter.
 * Usage: stress [rounds]   (default 1000; 8 threads x rounds x ~1,300
 * accesses: rounds=1000 is about 10^7 accesses and 16,000 lock operations).
 * Verdict at any size: a race on stress_racy only. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NT 8
#define SLICE 256

long stress_racy;                 /* unprotected: the one race */
long stress_locked;               /* always under stress_mu */
pthread_mutex_t stress_mu = PTHREAD_MUTEX_INITIALIZER;
static int stress_data[NT][SLICE]; /* each thread its own slice */
static long rounds;

static void *worker(void *arg)
{
	long id = (long)arg;
	int *mine = stress_data[id];
	for (long r = 0; r < rounds; r++) {
		/* before the round's locked update: the first increment of every
		 * thread precedes any hand-off through stress_mu, so the race is
		 * there in every schedule */
		if (r % 64 == 0)
			stress_racy++;
		for (int i = 0; i < SLICE; i++)
			mine[i] = mine[i] * 3 + i + (int)r;
		for (int i = 1; i < SLICE; i++)
			mine[i] ^= mine[i - 1];
		pthread_mutex_lock(&stress_mu);
		stress_locked += mine[r % SLICE] & 7;
		pthread_mutex_unlock(&stress_mu);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	rounds = argc > 1 ? atol(argv[1]) : 1000;
	pthread_t t[NT];
	for (long i = 0; i < NT; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < NT; i++)
		pthread_join(t[i], NULL);
	long sum = 0;
	for (int i = 0; i < NT; i++)
		for (int j = 0; j < SLICE; j++)
			sum += stress_data[i][j] & 0xff;
	printf("stress: rounds %ld, checksum %ld, locked %ld\n", rounds, sum, stress_locked);
	return 0;
}
