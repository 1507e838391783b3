/* One thread locks 'first' then 'second'; another holds 'second' and
 * only tries 'first', backing off when it is busy. A trylock cannot
 * block, so the reverse order cannot deadlock (ThreadSanitizer does not
 * report it either).
 * Expected: no report. */
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t first = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t second = PTHREAD_MUTEX_INITIALIZER;
static long done;

static void *in_order(void *arg)
{
	pthread_mutex_lock(&first);
	pthread_mutex_lock(&second);
	done++;
	pthread_mutex_unlock(&second);
	pthread_mutex_unlock(&first);
	return arg;
}

static void *try_reverse(void *arg)
{
	pthread_mutex_lock(&second);
	if (pthread_mutex_trylock(&first) == 0) {
		done++;
		pthread_mutex_unlock(&first);
	}
	pthread_mutex_unlock(&second);
	return arg;
}

int main(void)
{
	pthread_t t;
	pthread_create(&t, NULL, in_order, NULL);
	pthread_join(t, NULL);
	pthread_create(&t, NULL, try_reverse, NULL);
	pthread_join(t, NULL);
	printf("done=%ld\n", done);
	return 0;
}
