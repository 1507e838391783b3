/* Two races of one pair of instructions, reached by other call stacks
 * (cmd/hgrewrite/reports_test.go, TestReportPerStackPair): threads 1 and
 * 2 bump `sent` through send_path and retry_path, threads 3 and 4 bump
 * `received` through recv_path and drain_path, each once, one after
 * another (a sleep is no synchronisation). ThreadSanitizer reports both
 * races: their stacks differ. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

long sent, received;

__attribute__((noinline)) void bump(long *counter)
{
	++*counter; /* BUMP */
}

__attribute__((noinline)) void send_path(void) { bump(&sent); }
__attribute__((noinline)) void retry_path(void) { bump(&sent); }
__attribute__((noinline)) void recv_path(void) { bump(&received); }
__attribute__((noinline)) void drain_path(void) { bump(&received); }

static void *run(void *arg)
{
	long i = (long)arg;
	usleep(20000 * i);
	void (*paths[])(void) = {send_path, retry_path, recv_path, drain_path};
	paths[i]();
	return NULL;
}

int main(void)
{
	pthread_t t[4];
	for (long i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, run, (void *)i);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	printf("%ld %ld\n", sent, received);
	return 0;
}
