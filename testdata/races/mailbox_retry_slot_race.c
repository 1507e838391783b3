/* verdict: race
 * racy: heap:new_letter
 * needs: lib
 * expect-exit: 0
 */
/* mailbox_retry_slot.c with a bug: the writer stamps its letter after
 * posting it (after the unlock that put it in the slot), and the reader
 * reads the stamp after taking the letter out. Nothing orders the
 * stamp's write after the writer's unlock before the reader's read: the
 * writer never locks the mutex again. One writer, one letter. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

struct letter {
	long seq, stamp;
};

static pthread_mutex_t slot_mu = PTHREAD_MUTEX_INITIALIZER;
static struct letter *slot;

__attribute__((noinline)) static struct letter *new_letter(long seq)
{
	struct letter *l = malloc(sizeof *l);
	l->seq = seq;
	l->stamp = 0;
	return l;
}

static void *writer(void *arg)
{
	struct letter *l = new_letter((long)arg);
	for (;;) {
		pthread_mutex_lock(&slot_mu);
		if (slot == NULL) {
			slot = l;
			pthread_mutex_unlock(&slot_mu);
			break;
		}
		pthread_mutex_unlock(&slot_mu);
		sched_yield();
	}
	l->stamp = 1; /* the bug: the letter is the reader's now */
	return NULL;
}

static void *reader(void *arg)
{
	struct letter *l = NULL;
	(void)arg;
	while (l == NULL) {
		pthread_mutex_lock(&slot_mu);
		l = slot;
		slot = NULL;
		pthread_mutex_unlock(&slot_mu);
		if (l == NULL)
			sched_yield();
	}
	long seen = l->seq + l->stamp;
	return (void *)(long)(seen >= 7);
}

int main(void)
{
	pthread_t r, w;
	void *ok;
	pthread_create(&r, NULL, reader, NULL);
	pthread_create(&w, NULL, writer, (void *)7);
	pthread_join(w, NULL);
	pthread_join(r, &ok);
	printf("mailbox: seq seen %s\n", ok ? "yes" : "no");
	return 0;
}
