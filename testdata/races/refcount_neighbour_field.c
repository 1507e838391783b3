/* verdict: race-free
 * needs: lib
 * expect-exit: 0
 */
/* A message with an atomic reference count and a plain sequence number
 * in the same 8 bytes, handed to four readers per round: each reads the
 * sequence number and the payload, adds its sum to a total under a mutex
 * and drops its reference; whichever drop is last frees the message. The
 * count's atomic decrements order every reader's reads before the free.
 * The count and its neighbour are one granule of shadow: the count's
 * bytes become a synchronisation variable and the sequence number a
 * location of its own (the granule splits). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define READERS 4
#define ROUNDS 40

struct msg {
	int refs; /* atomic */
	int seq;
	long payload[8];
};

static long total;
static pthread_mutex_t total_mu = PTHREAD_MUTEX_INITIALIZER;

static void drop(struct msg *m)
{
	if (__atomic_sub_fetch(&m->refs, 1, __ATOMIC_ACQ_REL) == 0)
		free(m);
}

static void *reader(void *arg)
{
	struct msg *m = arg;
	long s = m->seq;
	for (int i = 0; i < 8; i++)
		s += m->payload[i];
	pthread_mutex_lock(&total_mu);
	total += s;
	pthread_mutex_unlock(&total_mu);
	drop(m);
	return NULL;
}

int main(void)
{
	for (int round = 0; round < ROUNDS; round++) {
		struct msg *m = malloc(sizeof *m);
		m->refs = READERS + 1;
		m->seq = round;
		for (int i = 0; i < 8; i++)
			m->payload[i] = i;
		pthread_t th[READERS];
		for (int i = 0; i < READERS; i++)
			pthread_create(&th[i], NULL, reader, m);
		drop(m);
		for (int i = 0; i < READERS; i++)
			pthread_join(th[i], NULL);
	}
	printf("total %ld\n", total);
	return 0;
}
