/* Two threads take two global mutexes in opposite orders, one after the
 * other (the first is joined before the second starts): no deadlock
 * happens in this run, but run at the same time they could deadlock.
 * Expected: one lock-order inversion naming 'first' and 'second'. */
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t first = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t second = PTHREAD_MUTEX_INITIALIZER;
static long counter;

static void *forward(void *arg)
{
	pthread_mutex_lock(&first);
	pthread_mutex_lock(&second);
	counter++;
	pthread_mutex_unlock(&second);
	pthread_mutex_unlock(&first);
	return arg;
}

static void *backward(void *arg)
{
	pthread_mutex_lock(&second);
	pthread_mutex_lock(&first);
	counter++;
	pthread_mutex_unlock(&first);
	pthread_mutex_unlock(&second);
	return arg;
}

int main(void)
{
	pthread_t t;
	pthread_create(&t, NULL, forward, NULL);
	pthread_join(t, NULL);
	pthread_create(&t, NULL, backward, NULL);
	pthread_join(t, NULL);
	printf("counter=%ld\n", counter);
	return 0;
}
