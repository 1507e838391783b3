/* annotations.c: programs that describe their own synchronisation to race
 * detectors (cmd/hgrewrite/annotations_test.go). One scenario per run,
 * named by argv[1]; the annotations come in one of three forms, chosen at
 * compile time:
 *
 *   (default)      ThreadSanitizer's dynamic-annotation functions, defined
 *                  here as projects do: empty, weak and not inlined
 *                  (-DTSAN_RUNTIME: only declared, ThreadSanitizer's
 *                  runtime defines them);
 *   -DHELGRIND     helgrind.h's client requests;
 *   -DDRD          drd.h's client requests.
 *
 * Scenarios (each thread touches the variables the scenario names; the
 * variables' names are what the reports must show):
 *
 *   handoff        data is written, then handed to the main thread through
 *                  flag, a relaxed atomic declared a benign race, with
 *                  happens-before/after annotations around it: ordered;
 *   handoff-bare   the same without the happens-before/after annotations:
 *                  the race on data must be reported;
 *   benign         two threads write benign (declared) and racy: only racy
 *                  may be reported;
 *   ignore         the main thread reads shared inside an ignore-reads
 *                  section while the other thread writes it: no report
 *                  (not with helgrind.h, which has no such request);
 *   ignore-bare    the same read outside the section: reported;
 *   running        prints RUNNING_ON_VALGRIND (client requests only).
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#if defined(HELGRIND)
#include <valgrind/helgrind.h>
#define HB(p) ANNOTATE_HAPPENS_BEFORE(p)
#define HA(p) ANNOTATE_HAPPENS_AFTER(p)
#define BENIGN(p, n) VALGRIND_HG_DISABLE_CHECKING(p, n)
#elif defined(DRD)
#include <valgrind/drd.h>
#define HB(p) ANNOTATE_HAPPENS_BEFORE(p)
#define HA(p) ANNOTATE_HAPPENS_AFTER(p)
#define BENIGN(p, n) ANNOTATE_BENIGN_RACE_SIZED(p, n, "declared")
#define IGNORE_READS_BEGIN() ANNOTATE_IGNORE_READS_BEGIN()
#define IGNORE_READS_END() ANNOTATE_IGNORE_READS_END()
#else
void AnnotateHappensBefore(const char *f, int l, const volatile void *a) __attribute__((noinline, weak));
void AnnotateHappensAfter(const char *f, int l, const volatile void *a) __attribute__((noinline, weak));
void AnnotateBenignRaceSized(const char *f, int l, const volatile void *a, long size, const char *desc)
	__attribute__((noinline, weak));
void AnnotateIgnoreReadsBegin(const char *f, int l) __attribute__((noinline, weak));
void AnnotateIgnoreReadsEnd(const char *f, int l) __attribute__((noinline, weak));
#ifndef TSAN_RUNTIME
void AnnotateHappensBefore(const char *f, int l, const volatile void *a) { (void)f, (void)l, (void)a; }
void AnnotateHappensAfter(const char *f, int l, const volatile void *a) { (void)f, (void)l, (void)a; }
void AnnotateBenignRaceSized(const char *f, int l, const volatile void *a, long size, const char *desc)
{
	(void)f, (void)l, (void)a, (void)size, (void)desc;
}
void AnnotateIgnoreReadsBegin(const char *f, int l) { (void)f, (void)l; }
void AnnotateIgnoreReadsEnd(const char *f, int l) { (void)f, (void)l; }
#endif
#define HB(p) AnnotateHappensBefore(__FILE__, __LINE__, p)
#define HA(p) AnnotateHappensAfter(__FILE__, __LINE__, p)
#define BENIGN(p, n) AnnotateBenignRaceSized(__FILE__, __LINE__, p, n, "declared")
#define IGNORE_READS_BEGIN() AnnotateIgnoreReadsBegin(__FILE__, __LINE__)
#define IGNORE_READS_END() AnnotateIgnoreReadsEnd(__FILE__, __LINE__)
#endif

int data, flag, benign, racy, shared;
static const char *mode;

static void *worker(void *arg)
{
	(void)arg;
	if (strncmp(mode, "handoff", 7) == 0) {
		data = 42;
		if (strcmp(mode, "handoff") == 0)
			HB(&flag);
		__atomic_store_n(&flag, 1, __ATOMIC_RELAXED);
	} else if (strcmp(mode, "benign") == 0) {
		benign = 1;
		racy = 1;
	} else {
		shared = 1;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	mode = argc > 1 ? argv[1] : "handoff";
#ifdef RUNNING_ON_VALGRIND
	if (strcmp(mode, "running") == 0) {
		printf("RUNNING_ON_VALGRIND %d\n", (int)RUNNING_ON_VALGRIND);
		return 0;
	}
#endif
#ifndef IGNORE_READS_BEGIN
	if (strcmp(mode, "ignore") == 0)
		return 77; /* not expressible */
#endif
	BENIGN(&flag, sizeof flag);
	BENIGN(&benign, sizeof benign);
	pthread_t th;
	pthread_create(&th, NULL, worker, NULL);
	int got = 0;
	if (strncmp(mode, "handoff", 7) == 0) {
		while (!__atomic_load_n(&flag, __ATOMIC_RELAXED))
			;
		if (strcmp(mode, "handoff") == 0)
			HA(&flag);
		got = data;
	} else if (strcmp(mode, "benign") == 0) {
		benign = 2;
		racy = 2;
	} else if (strcmp(mode, "ignore") == 0) {
#ifdef IGNORE_READS_BEGIN
		IGNORE_READS_BEGIN();
		got = shared;
		IGNORE_READS_END();
#endif
	} else {
		got = *(volatile int *)&shared;
	}
	pthread_join(th, NULL);
	printf("%s %d\n", mode, got == 42 || got == 0 || got == 1);
	return 0;
}
