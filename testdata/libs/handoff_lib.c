/* handoff_lib.c: a shared library that hands a buffer to its own worker
 * thread as liblzma's multithreaded encoder does. The caller fills the
 * buffer outside the lock (memcpy), publishes its size under the
 * library's mutex and signals; the worker finds the size under the same
 * mutex (waiting for it, or finding it set already) and copies the
 * buffer out (memcpy). The rewriter does not see this library's loads
 * and stores, only its calls: the mutex, the condition variable and the
 * two copies. With HL_RACY set the worker copies before it looks at the
 * size: a real race between the two copies. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static char *in;
static size_t cap, in_size, done_size;
static char *out;
static pthread_t worker;

static void *work(void *arg)
{
	(void)arg;
	if (getenv("HL_RACY"))
		memcpy(out, in, cap);
	if (getenv("HL_LATE"))
		usleep(20000); /* the caller has published already: no wait */
	pthread_mutex_lock(&mu);
	while (in_size == 0)
		pthread_cond_wait(&cv, &mu);
	size_t n = in_size;
	pthread_mutex_unlock(&mu);
	memcpy(out, in, n);
	pthread_mutex_lock(&mu);
	done_size = n;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&mu);
	return NULL;
}

void hl_start(size_t size)
{
	cap = size;
	in = malloc(cap);
	out = malloc(cap);
	pthread_create(&worker, NULL, work, NULL);
}

/* hl_run hands src to the worker and returns the sum of what it copied. */
long hl_run(const char *src)
{
	memcpy(in, src, cap);
	pthread_mutex_lock(&mu);
	in_size = cap;
	pthread_cond_signal(&cv);
	while (done_size == 0)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	pthread_join(worker, NULL);
	long sum = 0;
	for (size_t i = 0; i < cap; i++)
		sum += out[i];
	return sum;
}
