/* Four threads at once take up to three global mutexes, always in the
 * order outer < middle < inner (some skip one), many times, and take a
 * held mutex again (recursive mutex). No order is ever inverted.
 * Expected: no report. */
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t outer = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t middle;
static pthread_mutex_t inner = PTHREAD_MUTEX_INITIALIZER;
static long a, b, c;

static void *worker(void *arg)
{
	long id = (long)arg;
	for (int i = 0; i < 1000; i++) {
		pthread_mutex_lock(&outer);
		if ((i + id) % 2) {
			pthread_mutex_lock(&middle);
			pthread_mutex_lock(&middle); /* recursive */
			b++;
			pthread_mutex_unlock(&middle);
		}
		pthread_mutex_lock(&inner);
		a++;
		c++;
		pthread_mutex_unlock(&inner);
		if ((i + id) % 2)
			pthread_mutex_unlock(&middle);
		pthread_mutex_unlock(&outer);
		pthread_mutex_lock(&middle);
		pthread_mutex_lock(&inner);
		c++;
		pthread_mutex_unlock(&inner);
		pthread_mutex_unlock(&middle);
	}
	return NULL;
}

int main(void)
{
	pthread_mutexattr_t attr;
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&middle, &attr);
	pthread_t t[4];
	for (long i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	printf("a=%ld b=%ld c=%ld\n", a, b, c);
	return 0;
}
