/* verdict: race
 * racy: heap:new_msg
 * needs: lib
 * expect-exit: 0
 */
/* refcount_neighbour_field.c with a bug: each reader also stamps the
 * message's sequence number (the plain neighbour of the atomic reference
 * count, in the same 8 bytes) after it added its sum and before it drops
 * its reference. The readers' stamps and reads of the sequence number are
 * unordered: the mutex orders only what a reader did before its unlock
 * and the next one after its lock, and a stamp comes after the unlock
 * while a read comes before the lock. The drops still order every access
 * before the free. */
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

static void consume(int v) { __asm__ __volatile__("" : : "r"(v)); }

__attribute__((noinline)) static struct msg *new_msg(int seq)
{
	struct msg *m = malloc(sizeof *m);
	m->refs = READERS + 1;
	m->seq = seq;
	for (int i = 0; i < 8; i++)
		m->payload[i] = i;
	return m;
}

static void drop(struct msg *m)
{
	if (__atomic_sub_fetch(&m->refs, 1, __ATOMIC_ACQ_REL) == 0)
		free(m);
}

static void *reader(void *arg)
{
	struct msg *m = arg;
	consume(m->seq); /* races with the other readers' stamps */
	long s = 0;
	for (int i = 0; i < 8; i++)
		s += m->payload[i];
	pthread_mutex_lock(&total_mu);
	total += s;
	pthread_mutex_unlock(&total_mu);
	m->seq = -1; /* BUG: a stamp by every reader, unordered */
	drop(m);
	return NULL;
}

int main(void)
{
	for (int round = 0; round < ROUNDS; round++) {
		struct msg *m = new_msg(round);
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
