/* The call-trace test program (cmd/hgrewrite/reports_test.go,
 * TestReportCallersNotGuessed): two earlier accesses whose callers the
 * reports must leave out rather than guess. The writers run first and
 * have exited, unjoined, when main reads (a sleep is no
 * synchronisation), so each race's previous access is the writer's.
 *   - old_var: put's write, then 6,000 calls: the thread's call trace
 *     (4,096 entries) no longer holds put's call.
 *   - two_var: put called from two places in one segment: the trace
 *     cannot tell which call made the access the cell remembers.
 *   - one_var: set_once, called from one place only (in a loop: each
 *     call enters with the stack pointer and return address of the one
 *     before, which is no tail call): its callers are shown, once.
 *   - relay_var: written by a handler that dispatch calls through a
 *     pointer as its last act (an indirect tail call at -O2): the
 *     handler's callers are shown, dispatch at that call. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

long old_var, two_var, one_var, relay_var;
static volatile long sink;

__attribute__((noinline)) void put(long *p, long v)
{
	*p = v; /* PUT */
}

__attribute__((noinline)) void set_once(long *p, long v)
{
	*p = v; /* ONCE */
}

__attribute__((noinline)) void churn(long i) { sink += i; }

__attribute__((noinline)) void from_here(void) { put(&two_var, 1); }
__attribute__((noinline)) void from_there(void) { put(&two_var, 2); }
__attribute__((noinline)) void only_caller(void)
{
	for (volatile int i = 0; i < 3; i++)
		set_once(&one_var, i); /* ONLY */
}

__attribute__((noinline)) void relay_handler(long *p)
{
	*p = 4; /* RELAY */
}

void (*volatile handler)(long *) = relay_handler;

__attribute__((noinline)) void dispatch(long *p)
{
	handler(p); /* DISPATCH */
}

static void *relay(void *arg)
{
	dispatch(&relay_var); /* RELAYED */
	return arg;
}

static void *forgetful(void *arg)
{
	put(&old_var, 1);
	for (long i = 0; i < 6000; i++)
		churn(i);
	return arg;
}

static void *twofold(void *arg)
{
	from_here();
	from_there();
	only_caller(); /* SINGLE */
	return arg;
}

int main(void)
{
	pthread_t a, b, c;
	pthread_create(&a, NULL, forgetful, NULL);
	pthread_create(&b, NULL, twofold, NULL);
	pthread_create(&c, NULL, relay, NULL);
	usleep(200 * 1000);
	long sum = old_var + two_var + one_var + relay_var;
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	pthread_join(c, NULL);
	printf("%ld\n", sum);
	return 0;
}
