/* mlock_future.c: a program that locks its future memory without the
 * privilege to lock more than a little (a service started by an
 * ordinary user), then works within that limit. Natively every
 * allocation succeeds; the runtime's own later mappings must not count
 * against the program's limit (they made its mallocs fail with EAGAIN,
 * or the Go runtime run out of memory and abort). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

/* blocks allocates, writes and frees 1 MB blocks, each a mapping of its
 * own; it returns how many allocations failed. */
static void *blocks(void *arg)
{
	(void)arg;
	long failures = 0;
	for (int i = 0; i < 100; i++) {
		char *p = malloc(1 << 20);
		if (!p) {
			failures++;
			continue;
		}
		memset(p, i, 1 << 20);
		free(p);
	}
	return (void *)failures;
}

/* main locks its future memory where that is limited (RLIMIT_MEMLOCK
 * of 8 MB, no CAP_IPC_LOCK: run as root, it drops to nobody first), then starts two threads on small stacks that allocate,
 * write and free 1 MB blocks (each a mapping of its own, locked when
 * made) and builds a linked list of small blocks, all within the limit: every allocation must succeed, as it does natively.
 * The runtime's own later mappings must not count against the limit. */
int main(void)
{
	struct rlimit rl = {8 << 20, 8 << 20};
	if (getuid() == 0 && (setrlimit(RLIMIT_MEMLOCK, &rl) != 0 || setgid(65534) != 0 || setuid(65534) != 0)) {
		printf("unprivileged: cannot drop privileges\n");
		return 1;
	}
	int r = mlockall(MCL_FUTURE);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 << 10);
	pthread_t t[2];
	int failures = 0, started = 0;
	for (; started < 2; started++)
		if (pthread_create(&t[started], &attr, blocks, NULL) != 0) {
			failures++;
			break;
		}
	for (int i = 0; i < started; i++) {
		void *res = NULL;
		pthread_join(t[i], &res);
		failures += (int)(long)res;
	}
	struct node {
		struct node *next;
		char pad[120];
	} *list = NULL;
	for (int i = 0; i < 20000; i++) {
		struct node *n = malloc(sizeof *n);
		if (!n) {
			failures++;
			break;
		}
		n->next = list;
		list = n;
	}
	while (list) {
		struct node *n = list->next;
		free(list);
		list = n;
	}
	char *big = malloc(4 << 20);
	if (big) {
		memset(big, 1, 4 << 20);
		free(big);
	} else {
		failures++;
	}
	pthread_attr_destroy(&attr);
	printf("unprivileged: mlockall(MCL_FUTURE) %d, %d allocations failed\n", r, failures);
	return 0;
}
