/* verdict: race
 * racy: heap:make_block
 * needs: lib
 * expect-exit: 0
 */
/* The buffer pool of pool_recycle_many_threads, with one bug: the checker
 * stamps each block as checked after it has given the block back to the
 * pool. The next worker that takes the block writes its stamp too; nothing
 * orders the checker's late write before that worker's take (the pool
 * mutex was released before the write), so the two writes race on every
 * block that is taken again, and every block is, many times. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#define BLOCKS 16
#define WORKERS 4
#define ROUNDS 800 /* blocks each worker fills */

struct block {
	struct block *next;
	int owner, round;
	int stamp;
	long words[6];
};

static struct block *pool_head, *done_head;
static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER, done_mu = PTHREAD_MUTEX_INITIALIZER;
static long checked_sum;

__attribute__((noinline)) static struct block *make_block(void)
{
	struct block *b = calloc(1, sizeof *b);
	if (!b)
		abort();
	return b;
}

static void push(struct block **head, pthread_mutex_t *mu, struct block *b)
{
	pthread_mutex_lock(mu);
	b->next = *head;
	*head = b;
	pthread_mutex_unlock(mu);
}

static struct block *pop(struct block **head, pthread_mutex_t *mu)
{
	for (;;) {
		pthread_mutex_lock(mu);
		struct block *b = *head;
		if (b)
			*head = b->next;
		pthread_mutex_unlock(mu);
		if (b)
			return b;
		sched_yield();
	}
}

static void *worker(void *arg)
{
	int id = (int)(long)arg;
	for (int r = 0; r < ROUNDS; r++) {
		struct block *b = pop(&pool_head, &pool_mu);
		b->owner = id;
		b->round = r;
		b->stamp = 0;
		for (int i = 0; i < 6; i++)
			b->words[i] = (long)id * 1000 + r + i;
		push(&done_head, &done_mu, b);
	}
	return NULL;
}

static void *checker(void *arg)
{
	(void)arg;
	long sum = 0;
	for (int n = 0; n < WORKERS * ROUNDS; n++) {
		struct block *b = pop(&done_head, &done_mu);
		for (int i = 0; i < 6; i++)
			sum += b->words[i] - ((long)b->owner * 1000 + b->round + i);
		push(&pool_head, &pool_mu, b);
		b->stamp = 1; /* too late: the block is in the pool again */
	}
	checked_sum = sum;
	return NULL;
}

int main(void)
{
	for (int i = 0; i < BLOCKS; i++)
		push(&pool_head, &pool_mu, make_block());
	pthread_t w[WORKERS], c;
	pthread_create(&c, NULL, checker, NULL);
	for (long i = 0; i < WORKERS; i++)
		pthread_create(&w[i], NULL, worker, (void *)i);
	for (int i = 0; i < WORKERS; i++)
		pthread_join(w[i], NULL);
	pthread_join(c, NULL);
	printf("pool: %d blocks checked, mismatch %ld\n", WORKERS * ROUNDS, checked_sum);
	return 0;
}
