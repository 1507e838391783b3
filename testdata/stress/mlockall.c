/* mlockall.c: a program that locks its memory (a real-time or
 * key-handling program's start-up) and then allocates, writes and frees
 * blocks of a few megabytes in two threads. The locking child runs under
 * a watchdog: past 1 GB of resident memory it is killed and the program
 * fails, instead of growing until the OOM killer ends it (what
 * mlockall(MCL_CURRENT) did to a rewritten program whose runtime had
 * reserved address space for its shadow). errno must survive malloc and
 * free, whose shadow resets may find the pages locked. Then big sparse
 * tables, locked on fault (sparse_tables). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LIMIT_KB (1024 * 1024)

static int errno_changes;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static void note_errno(void)
{
	pthread_mutex_lock(&mu);
	errno_changes++;
	pthread_mutex_unlock(&mu);
}

static void *churn(void *arg)
{
	long seed = (long)arg;
	for (int i = 0; i < 40; i++) {
		size_t n = (size_t)(1 + (i + seed) % 6) << 20;
		errno = 4242;
		char *p = malloc(n);
		if (errno != 4242)
			note_errno();
		if (!p)
			abort();
		for (size_t k = 0; k < n; k += 64)
			p[k] = (char)i;
		errno = 4242;
		free(p);
		if (errno != 4242)
			note_errno();
	}
	return NULL;
}

/* sparse_tables locks on fault (only what is touched stays in memory, as
 * a service with a big sparse table asks) and three times allocates 512
 * MB, touches a byte of each megabyte and frees it. The resets of the
 * table's shadow at malloc and free may not drop its pages (they are
 * locked): storing zeros into those never touched faulted in and locked
 * 2 GB of shadow a table (8.4 GB and 54 s for an outsider's 2 GB table). */
static void sparse_tables(void)
{
	if (mlockall(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT) != 0)
		return; /* a kernel without MCL_ONFAULT */
	for (int round = 0; round < 3; round++) {
		size_t n = (size_t)512 << 20;
		char *p = malloc(n);
		if (!p)
			abort();
		for (size_t k = 0; k < n; k += 1 << 20)
			p[k] = (char)round;
		free(p);
	}
}

static int locked_child(void)
{
	if (mlockall(MCL_CURRENT | MCL_FUTURE) != 0) {
		printf("mlockall: %s\n", strerror(errno));
		return 0; /* no lock allowed here (no CAP_IPC_LOCK, small limit): nothing to test */
	}
	pthread_t t[2];
	for (long i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, churn, (void *)i);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	sparse_tables();
	munlockall();
	printf("locked: errno changed %d times\n", errno_changes);
	return errno_changes == 0 ? 0 : 1;
}

/* resident_kb is the child's resident memory, from /proc. */
static long resident_kb(pid_t pid)
{
	char path[64], line[256];
	long kb = 0;
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

int main(void)
{
	fflush(stdout);
	pid_t child = fork();
	if (child == 0) {
		int r = locked_child();
		fflush(stdout);
		_exit(r);
	}
	for (;;) {
		int status;
		pid_t r = waitpid(child, &status, WNOHANG);
		if (r == child) {
			if (!WIFEXITED(status)) {
				printf("child ended by signal %d\n", WTERMSIG(status));
				return 2;
			}
			return WEXITSTATUS(status);
		}
		if (resident_kb(child) > LIMIT_KB) {
			kill(child, SIGKILL);
			waitpid(child, &status, 0);
			printf("child passed %d MB resident: killed\n", LIMIT_KB / 1024);
			return 3;
		}
		struct timespec ts = {0, 5 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
}
