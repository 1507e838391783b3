/* A thread locks 'outer' then 'slot'; then 'slot' is destroyed and a new
 * mutex made in its place, which another thread locks before 'outer'.
 * The new mutex is another lock: no order is inverted.
 * Expected: no report. */
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t outer = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t slot;
static long n;

static void *outer_then_slot(void *arg)
{
	pthread_mutex_lock(&outer);
	pthread_mutex_lock(&slot);
	n++;
	pthread_mutex_unlock(&slot);
	pthread_mutex_unlock(&outer);
	return arg;
}

static void *slot_then_outer(void *arg)
{
	pthread_mutex_lock(&slot);
	pthread_mutex_lock(&outer);
	n++;
	pthread_mutex_unlock(&outer);
	pthread_mutex_unlock(&slot);
	return arg;
}

int main(void)
{
	pthread_t t;
	pthread_mutex_init(&slot, NULL);
	pthread_create(&t, NULL, outer_then_slot, NULL);
	pthread_join(t, NULL);
	pthread_mutex_destroy(&slot);
	pthread_mutex_init(&slot, NULL);
	pthread_create(&t, NULL, slot_then_outer, NULL);
	pthread_join(t, NULL);
	printf("n=%ld\n", n);
	return 0;
}
