/* refcount.c: objects shared by reference counts, as std::shared_ptr
 * and Arc share them: threads look objects up in a table, take a
 * reference with an atomic increment, read the object and drop the
 * reference with an atomic decrement; each thread also counts its
 * operations on an atomic counter of its own (statistics). Every
 * operation is three locked instructions; the counts are shared, the
 * statistics are not. Race-free. Usage: refcount [operations per thread]
 * [threads] (default 200000 4). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#define OBJECTS 256

struct object {
	atomic_long refs;
	long payload[3];
};

struct stats {
	atomic_long ops;
	char pad[56];
};

static struct object table[OBJECTS];
static struct stats stats[64];
static long ops;

static void *worker(void *arg)
{
	long id = (long)arg, sum = 0;
	unsigned seed = (unsigned)id * 7919 + 1;
	for (long i = 0; i < ops; i++) {
		seed = seed * 1103515245 + 12345;
		struct object *o = &table[(seed >> 8) % OBJECTS];
		atomic_fetch_add_explicit(&o->refs, 1, memory_order_relaxed);
		sum += o->payload[0] + o->payload[2];
		atomic_fetch_sub_explicit(&o->refs, 1, memory_order_acq_rel);
		atomic_fetch_add_explicit(&stats[id].ops, 1, memory_order_relaxed);
	}
	return (void *)sum;
}

int main(int argc, char **argv)
{
	ops = argc > 1 ? atol(argv[1]) : 200000;
	int nt = argc > 2 ? atoi(argv[2]) : 4;
	if (nt < 1 || nt > 64)
		nt = 4;
	for (int i = 0; i < OBJECTS; i++)
		table[i].payload[0] = i, table[i].payload[2] = 2 * i;
	pthread_t t[64];
	for (long i = 0; i < nt; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	long sum = 0, done = 0;
	for (int i = 0; i < nt; i++) {
		void *r;
		pthread_join(t[i], &r);
		sum += (long)r;
		done += atomic_load(&stats[i].ops);
	}
	printf("refcount: %ld operations, sum %ld\n", done, sum);
	return 0;
}
