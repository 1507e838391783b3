/* expect-exit: 0 */
/* A program that owns SIGURG (servers take it for out-of-band socket
 * data) and sleeps in threads that also do a lot of small work: pipe
 * round trips, a shared counter under a mutex, heap blocks. Nothing here
 * sends a signal, so the handler must never run and no sleep, read or
 * write may be interrupted (the handler is installed without SA_RESTART
 * so that a stray signal shows up as EINTR on the pipe too). The program
 * prints how many of each it saw: both must be 0, as they are natively. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { THREADS = 8, ROUNDS = 80, TRIPS = 200 };

static int handled;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static long total;
static int interrupted;

static void on_urg(int sig)
{
	(void)sig;
	__atomic_fetch_add(&handled, 1, __ATOMIC_RELAXED);
}

static void note(int rc)
{
	if (rc < 0 && errno == EINTR) {
		pthread_mutex_lock(&mu);
		interrupted++;
		pthread_mutex_unlock(&mu);
	}
}

static void *worker(void *arg)
{
	long id = (long)arg;
	int p[2];
	if (pipe(p) != 0)
		return NULL;
	for (int r = 0; r < ROUNDS; r++) {
		char c = (char)id;
		for (int i = 0; i < TRIPS; i++) {
			ssize_t w = write(p[1], &c, 1);
			note((int)w);
			ssize_t n = read(p[0], &c, 1);
			note((int)n);
		}
		char *block = malloc(64 + (size_t)r);
		memset(block, (int)id, 64);
		pthread_mutex_lock(&mu);
		total += block[0];
		pthread_mutex_unlock(&mu);
		free(block);
		struct timespec ts = {0, 1000 * 1000};
		note(nanosleep(&ts, NULL));
	}
	close(p[0]);
	close(p[1]);
	return NULL;
}

int main(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_urg;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGURG, &sa, NULL) != 0) {
		perror("sigaction");
		return 1;
	}
	pthread_t t[THREADS];
	for (long i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	printf("total %ld\n", total);
	printf("SIGURG handled %d times, %d calls interrupted\n",
	       __atomic_load_n(&handled, __ATOMIC_RELAXED), interrupted);
	return 0;
}
