/* mutex_contention.c: sixteen threads on a few mutexes of each kind the
 * runtime releases differently (a default mutex, whose unlock the runtime
 * makes itself to wake a sleeper after the region's publication; an
 * error-checking and a recursive one, which glibc unlocks), through lock,
 * trylock and timedlock, with condition-variable rounds that hand heap
 * blocks on. Every count is checked: a lost wake-up hangs the program, a
 * wrong release loses an increment. "one-cpu" pins the process to one CPU,
 * where a woken thread always preempts or waits for the one that woke it.
 * Race-free: no report expected. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define THREADS 16
#define OPS 20000
#define WORDS 64

static pthread_mutex_t plain = PTHREAD_MUTEX_INITIALIZER, checked, recursive;
static pthread_cond_t turn_cv = PTHREAD_COND_INITIALIZER;
static long plain_count, checked_count, recursive_count, turn;
static long *handed[THREADS];

static void lock_until(pthread_mutex_t *m)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 30;
	if (pthread_mutex_timedlock(m, &ts) != 0)
		abort();
}

/* round: thread id waits for its turn, frees the block handed to it and
 * hands a new one to the next thread */
static void round_of(long id)
{
	pthread_mutex_lock(&plain);
	while (turn % THREADS != id)
		pthread_cond_wait(&turn_cv, &plain);
	long *b = malloc(WORDS * sizeof *b);
	for (int w = 0; w < WORDS; w++)
		b[w] = id + w;
	free(handed[id]);
	handed[id] = NULL;
	handed[(id + 1) % THREADS] = b;
	turn++;
	pthread_cond_broadcast(&turn_cv);
	pthread_mutex_unlock(&plain);
}

static void *worker(void *arg)
{
	long id = (long)arg;
	for (long i = 0; i < OPS; i++) {
		switch (i % 5) {
		case 0:
			pthread_mutex_lock(&plain);
			plain_count++;
			pthread_mutex_unlock(&plain);
			break;
		case 1:
			if (pthread_mutex_trylock(&plain) != 0)
				pthread_mutex_lock(&plain);
			plain_count++;
			pthread_mutex_unlock(&plain);
			break;
		case 2:
			lock_until(&plain);
			plain_count++;
			pthread_mutex_unlock(&plain);
			break;
		case 3:
			pthread_mutex_lock(&checked);
			checked_count++;
			pthread_mutex_unlock(&checked);
			break;
		case 4:
			pthread_mutex_lock(&recursive);
			pthread_mutex_lock(&recursive);
			recursive_count++;
			pthread_mutex_unlock(&recursive);
			pthread_mutex_unlock(&recursive);
			break;
		}
		if (i % 1000 == 999)
			round_of(id);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "one-cpu") == 0) {
		cpu_set_t one;
		CPU_ZERO(&one);
		CPU_SET(sched_getcpu(), &one);
		if (sched_setaffinity(0, sizeof one, &one) != 0)
			perror("sched_setaffinity");
	}
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutex_init(&checked, &a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&recursive, &a);
	pthread_t t[THREADS];
	for (long i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	long sum = 0;
	for (int i = 0; i < THREADS; i++)
		for (int w = 0; handed[i] && w < WORDS; w++)
			sum += handed[i][w];
	int eperm = pthread_mutex_unlock(&checked) == EPERM; /* not held: refused */
	printf("plain %ld checked %ld recursive %ld rounds %ld sum %ld unheld-unlock-refused %d\n", plain_count,
	       checked_count, recursive_count, turn, sum, eperm);
	int ok = plain_count == 3L * THREADS * OPS / 5 && checked_count == (long)THREADS * OPS / 5 &&
		 recursive_count == (long)THREADS * OPS / 5 && eperm;
	return ok ? 0 : 1;
}
