/* A heap-allocated account holds its own mutex; a transfer locks the
 * source account, then the destination. Two transfers in opposite
 * directions (one after the other) invert the order of the two
 * accounts' mutexes.
 * Expected: one lock-order inversion, both mutexes in heap blocks
 * allocated by open_account. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct account {
	long balance;
	pthread_mutex_t lock;
};

static struct account *open_account(long balance)
{
	struct account *a = malloc(sizeof *a);
	a->balance = balance;
	pthread_mutex_init(&a->lock, NULL);
	return a;
}

struct transfer {
	struct account *from, *to;
	long amount;
};

static void *transfer(void *arg)
{
	struct transfer *t = arg;
	pthread_mutex_lock(&t->from->lock);
	pthread_mutex_lock(&t->to->lock);
	t->from->balance -= t->amount;
	t->to->balance += t->amount;
	pthread_mutex_unlock(&t->to->lock);
	pthread_mutex_unlock(&t->from->lock);
	return NULL;
}

int main(void)
{
	struct account *x = open_account(100), *y = open_account(100);
	struct transfer there = {x, y, 30}, back = {y, x, 10};
	pthread_t t;
	pthread_create(&t, NULL, transfer, &there);
	pthread_join(t, NULL);
	pthread_create(&t, NULL, transfer, &back);
	pthread_join(t, NULL);
	printf("balances=%ld %ld\n", x->balance, y->balance);
	pthread_mutex_destroy(&x->lock);
	pthread_mutex_destroy(&y->lock);
	free(x);
	free(y);
	return 0;
}
