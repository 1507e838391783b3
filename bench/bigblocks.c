/* bigblocks.c: a producer hands big reference-counted objects (256 KB
 * each, of which both threads use the first 4 KB) to a consumer through
 * a one-slot mailbox; whichever thread drops the last reference frees the
 * object, and the next malloc reuses its memory. The shape of a buffer
 * pool or of shared decoded frames: most of each block is never touched,
 * and every block is allocated and freed once.
 * Usage: bigblocks [objects] (default 4000). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OBJ_BYTES (256 * 1024)
#define USED_BYTES 4096

struct object {
	pthread_mutex_t mu;
	pthread_cond_t filled;
	int refs, ready;
	char data[OBJ_BYTES];
};

static struct object *mailbox;
static pthread_mutex_t mailbox_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t mailbox_cv = PTHREAD_COND_INITIALIZER;
static long objects;

static void release(struct object *o)
{
	pthread_mutex_lock(&o->mu);
	int last = --o->refs == 0;
	pthread_mutex_unlock(&o->mu);
	if (last) {
		pthread_cond_destroy(&o->filled);
		pthread_mutex_destroy(&o->mu);
		free(o);
	}
}

static void post(struct object *o)
{
	pthread_mutex_lock(&mailbox_mu);
	while (mailbox)
		pthread_cond_wait(&mailbox_cv, &mailbox_mu);
	mailbox = o;
	pthread_cond_broadcast(&mailbox_cv);
	pthread_mutex_unlock(&mailbox_mu);
}

static struct object *fetch(void)
{
	pthread_mutex_lock(&mailbox_mu);
	while (!mailbox)
		pthread_cond_wait(&mailbox_cv, &mailbox_mu);
	struct object *o = mailbox;
	mailbox = NULL;
	pthread_cond_broadcast(&mailbox_cv);
	pthread_mutex_unlock(&mailbox_mu);
	return o;
}

static void *consumer(void *arg)
{
	long *sum = arg;
	for (long i = 0; i < objects; i++) {
		struct object *o = fetch();
		pthread_mutex_lock(&o->mu);
		while (!o->ready)
			pthread_cond_wait(&o->filled, &o->mu);
		for (int k = 0; k < USED_BYTES; k += 64)
			*sum += o->data[k];
		pthread_mutex_unlock(&o->mu);
		release(o);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	objects = argc > 1 ? atol(argv[1]) : 4000;
	long sum = 0;
	pthread_t t;
	pthread_create(&t, NULL, consumer, &sum);
	for (long i = 0; i < objects; i++) {
		struct object *o = malloc(sizeof *o);
		pthread_mutex_init(&o->mu, NULL);
		pthread_cond_init(&o->filled, NULL);
		o->refs = 2;
		o->ready = 0;
		post(o);
		pthread_mutex_lock(&o->mu);
		memset(o->data, (int)(i & 0x7f), USED_BYTES);
		o->ready = 1;
		pthread_cond_signal(&o->filled);
		pthread_mutex_unlock(&o->mu);
		release(o);
	}
	pthread_join(t, NULL);
	printf("bigblocks: %ld\n", sum);
	return 0;
}
