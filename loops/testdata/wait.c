// Wait-enclosing loops: one case per function, so tests can assert per
// function. Built by loops_test.go at -O0 and -O2 with -pthread.
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
pthread_cond_t cv2 = PTHREAD_COND_INITIALIZER;
int flag, fa, fb, this_, that_, nwork;

struct queue {
	long pad;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int n;
};
struct queue gq = {0, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};

// while (!flag) wait: condition at the top (-O0: jump to the test at the
// bottom; -O2: test duplicated before the loop, rotated loop).
__attribute__((noinline)) void wait_basic(void) {
	pthread_mutex_lock(&mu);
	while (!flag)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
}

// do { wait } while (!flag): condition only at the bottom.
__attribute__((noinline)) void wait_dowhile(void) {
	pthread_mutex_lock(&mu);
	do
		pthread_cond_wait(&cv, &mu);
	while (!flag);
	pthread_mutex_unlock(&mu);
}

// Multi-condition loops (listing 8.2): several conditional exits.
__attribute__((noinline)) void wait_or(void) {
	pthread_mutex_lock(&mu);
	while (!fa || !fb)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
}

__attribute__((noinline)) void wait_and(void) {
	pthread_mutex_lock(&mu);
	while (fa && fb)
		pthread_cond_wait(&cv2, &mu);
	pthread_mutex_unlock(&mu);
}

__attribute__((noinline)) int do_work(void) { return ++nwork > 3; }

// Listing 6.5: nested loops; the wait is in the innermost one.
__attribute__((noinline)) void wait_nested(void) {
	int done = 0;
	while (!done) {
		pthread_mutex_lock(&mu);
		while (this_) {
			while (that_)
				pthread_cond_wait(&cv, &mu);
			this_--;
		}
		pthread_mutex_unlock(&mu);
		done = do_work();
	}
}

__attribute__((noinline)) int is_set(void) { return flag; }

// The condition is a function call.
__attribute__((noinline)) void wait_func(void) {
	pthread_mutex_lock(&mu);
	while (!is_set())
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
}

// Timed wait with a timeout exit.
__attribute__((noinline)) int wait_timed(void) {
	struct timespec ts;
	int r = 0;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 1;
	pthread_mutex_lock(&mu);
	while (!flag) {
		r = pthread_cond_timedwait(&cv, &mu, &ts);
		if (r == ETIMEDOUT)
			break;
	}
	pthread_mutex_unlock(&mu);
	return r;
}

// The condition variable and mutex are fields of a structure passed in.
__attribute__((noinline)) void wait_struct(struct queue *q) {
	pthread_mutex_lock(&q->mu);
	while (!q->n)
		pthread_cond_wait(&q->cv, &q->mu);
	q->n--;
	pthread_mutex_unlock(&q->mu);
}

// A wrapper like libuv's uv_cond_wait: the loop calls it, not the import.
__attribute__((noinline, noclone)) void my_cond_wait(pthread_cond_t *c, pthread_mutex_t *m) {
	if (pthread_cond_wait(c, m))
		abort();
}

__attribute__((noinline)) void wait_wrapped(void) {
	pthread_mutex_lock(&mu);
	while (!flag)
		my_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
}

// Not a wait loop: a loop without a wait call, and a wait without a loop.
__attribute__((noinline)) int no_wait_loop(int *a, int n) {
	int s = 0;
	for (int i = 0; i < n; i++)
		s += a[i];
	return s;
}

__attribute__((noinline)) void wait_once(void) {
	pthread_mutex_lock(&mu);
	if (!flag)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
}

static void *signaller(void *arg) {
	(void)arg;
	pthread_mutex_lock(&mu);
	flag = fa = fb = 1;
	that_ = this_ = 0;
	gq.n = 1;
	pthread_cond_broadcast(&cv);
	pthread_cond_broadcast(&cv2);
	pthread_cond_broadcast(&gq.cv);
	pthread_mutex_unlock(&mu);
	return 0;
}

int main(int argc, char **argv) {
	pthread_t t;
	int a[4] = {1, 2, 3, 4};
	(void)argv;
	pthread_create(&t, 0, signaller, 0);
	if (argc > 5) {
		wait_basic();
		wait_dowhile();
		wait_or();
		wait_and();
		wait_nested();
		wait_func();
		wait_timed();
		wait_struct(&gq);
		wait_once();
		wait_wrapped();
	}
	pthread_join(t, 0);
	return no_wait_loop(a, argc) == 0;
}
