/* readmostly.c: a read-mostly shared table, as a routing or configuration
 * cache is used: four reader threads look keys up in a 64 Ki-entry table
 * under a read lock, in batches of 64 lookups per lock; one writer thread
 * updates an entry under the write lock every 4,096 lookups of reader 0.
 * Race-free. Usage: readmostly [batches per reader] (default 20000). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define ENTRIES (1 << 16)
#define READERS 4
#define BATCH 64

static pthread_rwlock_t table_lock = PTHREAD_RWLOCK_INITIALIZER;
static unsigned table[ENTRIES];
static long batches = 20000;
static unsigned long found[READERS];

static void *reader(void *arg)
{
	long id = (long)arg;
	unsigned key = (unsigned)id * 2654435761u, sum = 0;
	for (long b = 0; b < batches; b++) {
		pthread_rwlock_rdlock(&table_lock);
		for (int i = 0; i < BATCH; i++) {
			key = key * 1103515245u + 12345u;
			sum += table[key & (ENTRIES - 1)];
		}
		pthread_rwlock_unlock(&table_lock);
	}
	found[id] = sum;
	return NULL;
}

static void *writer(void *arg)
{
	(void)arg;
	unsigned v = 1;
	for (long u = 0; u < batches * BATCH / 4096; u++) {
		pthread_rwlock_wrlock(&table_lock);
		table[(v * 40503u) & (ENTRIES - 1)] = v;
		pthread_rwlock_unlock(&table_lock);
		v++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		batches = atol(argv[1]);
	for (unsigned i = 0; i < ENTRIES; i++)
		table[i] = i;
	pthread_t r[READERS], w;
	for (long i = 0; i < READERS; i++)
		pthread_create(&r[i], NULL, reader, (void *)i);
	pthread_create(&w, NULL, writer, NULL);
	for (int i = 0; i < READERS; i++)
		pthread_join(r[i], NULL);
	pthread_join(w, NULL);
	unsigned long total = 0;
	for (int i = 0; i < READERS; i++)
		total += found[i] != 0;
	printf("readmostly: %d readers done, %lu found something\n", READERS, total);
	return 0;
}
