/* expect-exit: 0 */
/* corpus-variants: covering (a stress program: see coveringVariants in cmd/hgrewrite/e2e_test.go) */
/* Asynchronous cancellation: in each of 100 rounds two workers make
 * themselves asynchronously cancellable and run a loop over arrays of
 * their own (nothing but memory accesses, which is async-cancel-safe),
 * and main cancels and joins them. The cancellation may land anywhere in
 * the rewritten loop, the runtime's checks included. Each worker's array
 * is used by the next round's worker after the join. */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <unistd.h>

#define ROUNDS 100
#define WORDS 4096

static long arrays[2][WORDS];
static sem_t started;

static void *worker(void *arg)
{
	long *a = arrays[(long)arg];
	sem_post(&started);
	pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
	for (unsigned long i = 0;; i++)
		a[(i * 7) % WORDS] += (long)i;
	return NULL;
}

int main(void)
{
	int canceled = 0;
	sem_init(&started, 0, 0);
	for (int r = 0; r < ROUNDS; r++) {
		pthread_t t[2];
		for (long i = 0; i < 2; i++)
			pthread_create(&t[i], NULL, worker, (void *)i);
		for (int i = 0; i < 2; i++)
			sem_wait(&started);
		usleep(500 + 100 * (r % 10));
		for (int i = 0; i < 2; i++)
			pthread_cancel(t[i]);
		for (int i = 0; i < 2; i++) {
			void *ret;
			pthread_join(t[i], &ret);
			canceled += ret == PTHREAD_CANCELED;
		}
	}
	printf("%d of %d workers canceled\n", canceled, 2 * ROUNDS);
	return 0;
}
