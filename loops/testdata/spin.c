// Spinning-read loops and loops that are not. One case per function, so
// tests can assert per function. Built by loops_test.go at -O0 and -O2.
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

volatile int flag;	 // spin_flag
volatile int spinlock = 1; // spin_yield (figure 7.6)
volatile int flag3;	 // spin_sleep
volatile int lk;	 // ttas_lock, tas_lock
volatile int sense;	 // barrier_wait
volatile int bcount;
volatile int rflag;	 // spin_callee
atomic_int aflag;	 // spin_atomic
int COND;		 // spin_dowhile (figure 7.10)
volatile int wflag;	 // writes_flag
volatile int tflag;	 // callee_writes
pthread_mutex_t l = PTHREAD_MUTEX_INITIALIZER;
int n = 100, a[100];
long sum;

struct node {
	struct node *next;
	void *dso_handle;
};
struct node *head;

struct obj {
	long pad;
	volatile int ready;
};

// A read of flag outside any loop (a poll): one of its loads too.
__attribute__((noinline)) int peek_flag(void) { return flag; }

// while (!flag); with an empty body.
__attribute__((noinline)) void spin_flag(void) {
	while (!flag)
		;
}

// Figure 7.6.
__attribute__((noinline)) void spin_yield(void) {
	while (spinlock != 0)
		sched_yield();
}

__attribute__((noinline)) void spin_sleep(void) {
	while (!flag3) {
		struct timespec ts = {0, 1000};
		nanosleep(&ts, 0);
	}
}

// A field of an object the loop does not change.
__attribute__((noinline)) void spin_field(struct obj *p) {
	while (!p->ready)
		;
}

// Test-and-test-and-set: the inner read loop spins; the outer loop writes
// lk with xchg, so it is not a spinning-read loop.
__attribute__((noinline)) void ttas_lock(void) {
	while (__atomic_exchange_n(&lk, 1, __ATOMIC_ACQUIRE))
		while (lk)
			__builtin_ia32_pause();
}

// Test-and-set only: the loop writes what it reads: not a spinning read.
__attribute__((noinline)) void tas_lock(void) {
	while (__sync_lock_test_and_set(&lk, 1))
		;
}

// Sense-reversing barrier: spins on the global sense.
__attribute__((noinline)) void barrier_wait(int nthreads) {
	int s = !sense;
	if (__atomic_sub_fetch(&bcount, 1, __ATOMIC_ACQ_REL) == 0) {
		bcount = nthreads;
		sense = s;
	} else {
		while (sense != s)
			;
	}
}

__attribute__((noinline)) static int is_ready(void) { return rflag; }

// The flag is read in a small callee.
__attribute__((noinline)) void spin_callee(void) {
	while (!is_ready())
		sched_yield();
}

__attribute__((noinline)) static int field_ready(struct obj *p) { return p->ready; }

// The flag is a field read in a small callee through its argument.
__attribute__((noinline)) void spin_callee_arg(struct obj *p) {
	while (!field_ready(p))
		;
}

__attribute__((noinline)) void spin_atomic(void) {
	while (!atomic_load_explicit(&aflag, memory_order_acquire))
		;
}

// Figure 7.10: the condition is a copy of COND taken under a lock.
__attribute__((noinline)) void spin_dowhile(void) {
	int c;
	do {
		pthread_mutex_lock(&l);
		c = COND;
		pthread_mutex_unlock(&l);
		usleep(1);
	} while (!c);
}

// Figure 7.8: a list walk: the load address changes every iteration.
__attribute__((noinline)) struct node *list_walk(void *dso_handle) {
	struct node *runp = head;
	while (runp != 0) {
		if (runp->dso_handle == dso_handle)
			break;
		runp = runp->next;
	}
	return runp;
}

// A counting loop: the condition depends on the induction variable.
__attribute__((noinline)) void count_sum(void) {
	for (int i = 0; i < n; i++)
		sum += a[i];
}

// The loop writes the flag it reads.
__attribute__((noinline)) void writes_flag(void) {
	while (wflag > 0)
		wflag--;
}

// memcpy-like.
__attribute__((noinline)) void copy_loop(char *d, const char *s, long k) {
	while (k--)
		*d++ = *s++;
}

__attribute__((noinline)) static int take(void) {
	int v = tflag;
	tflag = 0;
	return v;
}

// The flag is read in a callee that also writes it.
__attribute__((noinline)) void callee_writes(void) {
	while (!take())
		;
}

static void *setter(void *arg) {
	(void)arg;
	flag = 1;
	spinlock = 0;
	flag3 = 1;
	rflag = 1;
	atomic_store(&aflag, 1);
	pthread_mutex_lock(&l);
	COND = 1;
	pthread_mutex_unlock(&l);
	return 0;
}

int main(int argc, char **argv) {
	pthread_t t;
	struct obj o = {0, 1};
	char buf[8];
	(void)argv;
	pthread_create(&t, 0, setter, 0);
	if (argc > 5) {
		spin_flag();
		spin_yield();
		spin_sleep();
		spin_field(&o);
		ttas_lock();
		tas_lock();
		barrier_wait(argc);
		spin_callee();
		spin_callee_arg(&o);
		spin_atomic();
		spin_dowhile();
		list_walk(argv);
		count_sum();
		writes_flag();
		copy_loop(buf, "abcdefg", 8);
		callee_writes();
	}
	pthread_join(t, 0);
	return 0;
}
