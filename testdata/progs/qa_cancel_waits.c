/* expect-exit: 0 */
/* corpus-variants: covering (a stress program: see coveringVariants in cmd/hgrewrite/e2e_test.go) */
/* Deferred cancellation of threads blocked where a thread pool's workers
 * block: a condition wait (with the cleanup handler that unlocks the
 * mutex the wait took back), a timed condition wait, a semaphore, a read
 * from a pipe, a sleep, a join, and pthread_testcancel in a loop. After
 * each round the survivors still share mutexes and condition variables,
 * and two threads take turns on one mutex at the end. Race-free: a
 * cancelled condition waiter holds the mutex again in its cleanup. */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static pthread_cond_t started_cv = PTHREAD_COND_INITIALIZER;
static int started, work_left, cleanups;
static sem_t sem;
static int pipefd[2];

static void unlock_mu(void *arg)
{
	(void)arg;
	cleanups++; /* under mu: the wait took it back */
	pthread_mutex_unlock(&mu);
}

static void count_cleanup(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&mu);
	cleanups++;
	pthread_mutex_unlock(&mu);
}

/* mark_started tells main the thread is about to block (the caller holds mu) */
static void mark_started(void)
{
	started++;
	pthread_cond_broadcast(&started_cv);
}

static void announce(void)
{
	pthread_mutex_lock(&mu);
	mark_started();
	pthread_mutex_unlock(&mu);
}

static void *cond_waiter(void *arg)
{
	int timed = arg != NULL;
	pthread_mutex_lock(&mu);
	pthread_cleanup_push(unlock_mu, NULL);
	mark_started();
	while (work_left == 0) {
		if (timed) {
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec += 60;
			pthread_cond_timedwait(&cv, &mu, &ts);
		} else {
			pthread_cond_wait(&cv, &mu);
		}
	}
	pthread_cleanup_pop(1);
	return (void *)1;
}

static void *sem_waiter(void *arg)
{
	(void)arg;
	pthread_cleanup_push(count_cleanup, NULL);
	announce();
	while (sem_wait(&sem) != 0 && errno == EINTR)
		;
	pthread_cleanup_pop(0);
	return (void *)2;
}

static void *reader(void *arg)
{
	(void)arg;
	char c;
	pthread_cleanup_push(count_cleanup, NULL);
	announce();
	ssize_t n = read(pipefd[0], &c, 1);
	(void)n;
	pthread_cleanup_pop(0);
	return (void *)3;
}

static void *sleeper(void *arg)
{
	(void)arg;
	pthread_cleanup_push(count_cleanup, NULL);
	announce();
	sleep(60);
	pthread_cleanup_pop(0);
	return (void *)4;
}

static void *joiner(void *arg)
{
	pthread_t *other = arg;
	pthread_cleanup_push(count_cleanup, NULL);
	announce();
	pthread_join(*other, NULL);
	pthread_cleanup_pop(0);
	return (void *)5;
}

static volatile long spins;

static void *spinner(void *arg)
{
	(void)arg;
	volatile long local = 0; /* kept across the cleanup's setjmp */
	pthread_cleanup_push(count_cleanup, NULL);
	announce();
	for (;;) {
		local++;
		if (local % 1000 == 0) {
			spins = local;
			pthread_testcancel();
		}
	}
	pthread_cleanup_pop(0);
	return (void *)6;
}

/* wait_started waits until n threads have said they are about to block */
static void wait_started(int n)
{
	pthread_mutex_lock(&mu);
	while (started < n)
		pthread_cond_wait(&started_cv, &mu);
	pthread_mutex_unlock(&mu);
}

static long turns;

static void *taker(void *arg)
{
	long n = (long)arg;
	for (long i = 0; i < n; i++) {
		pthread_mutex_lock(&mu);
		turns++;
		pthread_mutex_unlock(&mu);
	}
	return NULL;
}

int main(void)
{
	if (sem_init(&sem, 0, 0) != 0 || pipe(pipefd) != 0)
		return 1;
	pthread_t waiters[6], sems[2], rd, sl, blocked, jn, sp;
	for (int round = 0; round < 3; round++) {
		started = 0;
		for (long i = 0; i < 6; i++)
			pthread_create(&waiters[i], NULL, cond_waiter, i % 2 ? (void *)1 : NULL);
		for (int i = 0; i < 2; i++)
			pthread_create(&sems[i], NULL, sem_waiter, NULL);
		pthread_create(&rd, NULL, reader, NULL);
		pthread_create(&sl, NULL, sleeper, NULL);
		pthread_create(&blocked, NULL, sleeper, NULL);
		wait_started(11);
		pthread_create(&jn, NULL, joiner, &blocked);
		pthread_create(&sp, NULL, spinner, NULL);
		wait_started(13);
		/* the threads said so under mu just before blocking; give them
		 * time to block, though cancellation works either way */
		usleep(20000);
		pthread_t all[] = {waiters[0], waiters[1], waiters[2], waiters[3], waiters[4], waiters[5],
				   sems[0], sems[1], rd, sl, jn, sp};
		int n = (int)(sizeof all / sizeof all[0]), canceled = 0;
		for (int i = 0; i < n; i++)
			pthread_cancel(all[i]);
		for (int i = 0; i < n; i++) {
			void *ret;
			pthread_join(all[i], &ret);
			canceled += ret == PTHREAD_CANCELED;
		}
		pthread_cancel(blocked);
		void *ret;
		pthread_join(blocked, &ret);
		canceled += ret == PTHREAD_CANCELED;
		pthread_mutex_lock(&mu);
		printf("round %d: %d of %d canceled, %d cleanups\n", round, canceled, n + 1, cleanups);
		cleanups = 0;
		pthread_mutex_unlock(&mu);
	}
	/* the survivors: two threads taking turns on the mutex */
	pthread_t a, b;
	pthread_create(&a, NULL, taker, (void *)200000);
	pthread_create(&b, NULL, taker, (void *)200000);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("turns: %ld\n", turns);
	return 0;
}
