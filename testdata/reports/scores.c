/* The report test program (cmd/hgrewrite/reports_test.go): two named
 * threads update one global without a lock, one of them from a qsort
 * comparator, so that the stack after the access runs through libc. The
 * first thread has exited but is not joined when the second starts (a
 * sleep is no synchronisation), so the order of the two accesses, and
 * which one the report calls previous, is the same in every run. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

long score_total; /* the racy variable */
static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static long logged;

__attribute__((noinline)) static void note(void)
{
	pthread_mutex_lock(&log_mu);
	logged++;
	pthread_mutex_unlock(&log_mu);
}

__attribute__((noinline)) static void add_score(long v)
{
	score_total += v; /* RACE */
	note();
}

__attribute__((noinline)) static void tally_round(int round)
{
	add_score(round); /* TALLY */
}

static void *scorer(void *arg)
{
	pthread_setname_np(pthread_self(), "scorer");
	tally_round(1); /* SCORER */
	return arg;
}

static int by_value(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	if (x == 2 && y != 2)
		add_score(x);
	return (x > y) - (x < y);
}

static void *sorter(void *arg)
{
	pthread_setname_np(pthread_self(), "sorter");
	int v[] = {3, 2, 1};
	qsort(v, 3, sizeof v[0], by_value);
	return arg;
}

__attribute__((noinline)) static pthread_t start(void *(*fn)(void *))
{
	pthread_t t;
	pthread_create(&t, NULL, fn, NULL); /* CREATE */
	return t;
}

int main(void)
{
	pthread_t a = start(scorer);
	usleep(100 * 1000);
	pthread_t b = start(sorter);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("logged %ld\n", logged);
	return 0;
}
