/* pipeline.c: a two-stage producer/consumer pipeline over bounded queues
 * with condition variables. Usage: pipeline [items] (default 100000). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define CAP 64

struct queue {
	long buf[CAP];
	int head, tail, count;
	pthread_mutex_t mu;
	pthread_cond_t not_empty, not_full;
};

static struct queue q1, q2;
static long items;

static void qinit(struct queue *q)
{
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->not_empty, NULL);
	pthread_cond_init(&q->not_full, NULL);
}

static void push(struct queue *q, long v)
{
	pthread_mutex_lock(&q->mu);
	while (q->count == CAP)
		pthread_cond_wait(&q->not_full, &q->mu);
	q->buf[q->tail] = v;
	q->tail = (q->tail + 1) % CAP;
	q->count++;
	pthread_cond_signal(&q->not_empty);
	pthread_mutex_unlock(&q->mu);
}

static long pop(struct queue *q)
{
	pthread_mutex_lock(&q->mu);
	while (q->count == 0)
		pthread_cond_wait(&q->not_empty, &q->mu);
	long v = q->buf[q->head];
	q->head = (q->head + 1) % CAP;
	q->count--;
	pthread_cond_signal(&q->not_full);
	pthread_mutex_unlock(&q->mu);
	return v;
}

static void *stage(void *arg)
{
	(void)arg;
	for (long i = 0; i < items; i++)
		push(&q2, pop(&q1) * 3 + 1);
	return NULL;
}

int main(int argc, char **argv)
{
	items = argc > 1 ? atol(argv[1]) : 100000;
	qinit(&q1);
	qinit(&q2);
	pthread_t t;
	pthread_create(&t, NULL, stage, NULL);
	long sum = 0;
	for (long i = 0; i < items; i++) {
		push(&q1, i);
		if (i >= CAP / 2)
			sum += pop(&q2);
	}
	for (long i = items > CAP / 2 ? CAP / 2 : items; i > 0; i--)
		sum += pop(&q2);
	pthread_join(t, NULL);
	printf("pipeline: %ld\n", sum);
	return 0;
}
