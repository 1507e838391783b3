/* verdict: race-free
 * needs: lib
 * expect-exit: 0
 */
/* A one-slot mailbox under a mutex. Two writers each fill letters
 * (new_letter) and post them: a writer locks the mutex, puts its letter
 * in the slot if the slot is empty, else unlocks, yields and tries
 * again. The reader locks the mutex, takes whatever the slot holds and
 * empties it, unlocks, and reads the letter it took. The mutex orders
 * each letter's filling before its reading. The writers' retry loop reads
 * the slot and writes nothing while it loops (a spinning-read loop); the
 * reader's loop writes the slot, so its load of the slot is no spin
 * load. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#define LETTERS 2000

struct letter {
	long from, seq, body[4];
};

static pthread_mutex_t slot_mu = PTHREAD_MUTEX_INITIALIZER;
static struct letter *slot;

__attribute__((noinline)) static struct letter *new_letter(long from, long seq)
{
	struct letter *l = malloc(sizeof *l);
	l->from = from;
	l->seq = seq;
	for (int i = 0; i < 4; i++)
		l->body[i] = from * 1000000 + seq * 10 + i;
	return l;
}

static void post(struct letter *l)
{
	for (;;) {
		pthread_mutex_lock(&slot_mu);
		if (slot == NULL) {
			slot = l;
			pthread_mutex_unlock(&slot_mu);
			return;
		}
		pthread_mutex_unlock(&slot_mu);
		sched_yield();
	}
}

static void *writer(void *arg)
{
	long from = (long)arg;
	for (long seq = 0; seq < LETTERS; seq++)
		post(new_letter(from, seq));
	return NULL;
}

static void *reader(void *arg)
{
	long sum = 0, got = 0;
	(void)arg;
	while (got < 2 * LETTERS) {
		pthread_mutex_lock(&slot_mu);
		struct letter *l = slot;
		slot = NULL;
		pthread_mutex_unlock(&slot_mu);
		if (l == NULL) {
			sched_yield();
			continue;
		}
		sum += l->from + l->seq + l->body[0] + l->body[3];
		free(l);
		got++;
	}
	return (void *)sum;
}

int main(void)
{
	pthread_t r, w[2];
	void *sum;
	pthread_create(&r, NULL, reader, NULL);
	for (long i = 0; i < 2; i++)
		pthread_create(&w[i], NULL, writer, (void *)(i + 1));
	for (int i = 0; i < 2; i++)
		pthread_join(w[i], NULL);
	pthread_join(r, &sum);
	printf("mailbox: %ld letters, sum %ld\n", 2L * LETTERS, (long)sum);
	return 0;
}
