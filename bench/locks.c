/* locks.c: a hash table with striped mutexes (lock heavy).
 * Usage: locks [operations per thread] [threads]  (default 500000 2). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define BUCKETS 4096
#define STRIPES 64

struct node { long key, val; struct node *next; };
static struct node *table[BUCKETS];
static pthread_mutex_t stripe[STRIPES];
static long ops;

static void put(long key)
{
	unsigned h = (unsigned)(key * 2654435761u) % BUCKETS;
	pthread_mutex_t *m = &stripe[h % STRIPES];
	pthread_mutex_lock(m);
	for (struct node *p = table[h]; p; p = p->next)
		if (p->key == key) {
			p->val++;
			pthread_mutex_unlock(m);
			return;
		}
	struct node *nd = malloc(sizeof *nd);
	nd->key = key, nd->val = 1, nd->next = table[h];
	table[h] = nd;
	pthread_mutex_unlock(m);
}

static void *worker(void *arg)
{
	long seed = (long)arg * 7919 + 1;
	for (long i = 0; i < ops; i++) {
		seed = seed * 6364136223846793005L + 1442695040888963407L;
		put((seed >> 33) % 20000);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	ops = argc > 1 ? atol(argv[1]) : 500000;
	int nt = argc > 2 ? atoi(argv[2]) : 2;
	for (int i = 0; i < STRIPES; i++)
		pthread_mutex_init(&stripe[i], NULL);
	pthread_t t[64];
	for (long i = 0; i < nt; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < nt; i++)
		pthread_join(t[i], NULL);
	long total = 0;
	for (int i = 0; i < BUCKETS; i++)
		for (struct node *p = table[i]; p; p = p->next)
			total += p->val;
	printf("locks: %ld\n", total);
	return 0;
}
