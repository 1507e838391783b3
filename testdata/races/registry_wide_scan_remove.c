/* verdict: race-free
 * needs: lib
 * expect-exit: 0
 */
/* A registry of 48 slots under one mutex: a scanner sums every live item's
 * value under the mutex, reading more distinct locations in one region than
 * a region's record keeps; a remover unlinks the last slot's item under the
 * mutex and frees it after unlocking. A scan that used the item did so
 * before the unlink (it held the mutex); one after it sees the slot empty. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define SLOTS 48

struct item {
	long id, val;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct item *slots[SLOTS];

static void *scanner(void *arg)
{
	long *sum = arg;
	for (int round = 0; round < 50; round++) {
		pthread_mutex_lock(&mu);
		for (int i = 0; i < SLOTS; i++)
			if (slots[i])
				*sum += slots[i]->val;
		pthread_mutex_unlock(&mu);
	}
	return NULL;
}

static void *remover(void *arg)
{
	(void)arg;
	usleep(20000); /* most scans first: the order the false report needs, not the verdict */
	pthread_mutex_lock(&mu);
	struct item *it = slots[SLOTS - 1];
	slots[SLOTS - 1] = NULL;
	pthread_mutex_unlock(&mu);
	it->val = -1; /* the remover's own now: no scan can reach it */
	free(it);
	return NULL;
}

int main(void)
{
	for (int i = 0; i < SLOTS; i++) {
		slots[i] = malloc(sizeof *slots[i]);
		slots[i]->id = i;
		slots[i]->val = 1;
	}
	long sum = 0;
	pthread_t s, r;
	pthread_create(&s, NULL, scanner, &sum);
	pthread_create(&r, NULL, remover, NULL);
	pthread_join(s, NULL);
	pthread_join(r, NULL);
	printf("registry: %s\n", sum > 0 ? "scanned" : "empty");
	for (int i = 0; i < SLOTS - 1; i++)
		free(slots[i]);
	return 0;
}
