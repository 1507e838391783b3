/* expect-exit: 0 */
/* corpus-variants: covering (a stress program: see coveringVariants in cmd/hgrewrite/e2e_test.go) */
/* fork_heavy.c: children that work hard after fork().
 * The parent starts threads, then forks three children while they run.
 * Each child allocates and frees many blocks (~25 MB per child), starts
 * threads of its own and forks a grandchild, then exits with a status the
 * parent checks. A rewritten program must not hang or crash in children
 * whose runtime lost the parent's other threads at fork time.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long total;

static void *spin(void *arg)
{
	long n = (long)arg, s = 0;
	for (long i = 0; i < n; i++) {
		pthread_mutex_lock(&lock);
		total += i & 7;
		s += total & 1;
		pthread_mutex_unlock(&lock);
	}
	return (void *)s;
}

static unsigned churn(int rounds)
{
	unsigned h = 0;
	for (int r = 0; r < rounds; r++) {
		char *blocks[256];
		for (int i = 0; i < 256; i++) {
			size_t sz = 64 + (size_t)((i * 7919 + r) % 4096);
			blocks[i] = malloc(sz);
			memset(blocks[i], (i + r) & 0xff, sz);
		}
		for (int i = 0; i < 256; i++) {
			h = h * 31 + (unsigned char)blocks[i][i % 64];
			free(blocks[i]);
		}
	}
	return h;
}

static int child(int k)
{
	pthread_t t[2];
	/* A parent thread may have held the lock at fork time: start afresh. */
	pthread_mutex_init(&lock, NULL);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, spin, (void *)20000L);
	unsigned h = churn(50);
	pid_t g = fork();
	if (g == 0)
		_exit((int)(churn(10) % 50));
	int st = 0;
	waitpid(g, &st, 0);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("child %d: churn %u, grandchild exit %d\n", k, h, WEXITSTATUS(st));
	fflush(stdout);
	return 10 + k;
}

int main(void)
{
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, spin, (void *)200000L);
	for (int k = 0; k < 3; k++) {
		fflush(stdout);
		pid_t p = fork();
		if (p == 0)
			exit(child(k));
		int st = 0;
		waitpid(p, &st, 0);
		printf("parent: child %d exited with %d\n", k, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("parent: total %ld\n", total);
	return 0;
}
