/* calls.c: call-heavy code, as interpreters, parsers and tree code are:
 * two threads each build a binary tree of 2^16 nodes and walk it
 * recursively many times through small functions that are not inlined
 * (about 27 million calls per thread), adding their sums to a total
 * under a mutex after each walk. Every call pays the detector's
 * function-entry cost (hgrewrite's call trace, ThreadSanitizer's entry
 * and exit hooks). Race-free. Usage: calls [walks per thread] (default
 * 100). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define THREADS 2
#define DEPTH 16

struct node {
	struct node *left, *right;
	long value;
};

static pthread_mutex_t total_mu = PTHREAD_MUTEX_INITIALIZER;
static long total;
static long walks = 100;

__attribute__((noinline)) static struct node *build(int depth, long *next)
{
	if (depth == 0)
		return NULL;
	struct node *n = malloc(sizeof *n);
	n->value = (*next)++ % 7;
	n->left = build(depth - 1, next);
	n->right = build(depth - 1, next);
	return n;
}

__attribute__((noinline)) static long weight(const struct node *n) { return n->value * 3 + 1; }

__attribute__((noinline)) static long walk(const struct node *n)
{
	if (!n)
		return 0;
	return weight(n) + walk(n->left) + walk(n->right);
}

__attribute__((noinline)) static void release(struct node *n)
{
	if (!n)
		return;
	release(n->left);
	release(n->right);
	free(n);
}

static void *worker(void *arg)
{
	long next = (long)arg;
	struct node *root = build(DEPTH, &next);
	for (long i = 0; i < walks; i++) {
		long s = walk(root);
		pthread_mutex_lock(&total_mu);
		total += s;
		pthread_mutex_unlock(&total_mu);
	}
	release(root);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		walks = atol(argv[1]);
	pthread_t t[THREADS];
	for (long i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	printf("total %ld\n", total);
	return 0;
}
