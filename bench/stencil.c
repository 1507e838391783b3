/* stencil.c: a barrier-synchronised 2-D Jacobi stencil (memory heavy).
 * Usage: stencil [n] [iterations] [threads]  (default 1024 100 2). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static int n, iters, nthreads;
static double *a, *b;
static pthread_barrier_t bar;

static void *worker(void *arg)
{
	long id = (long)arg;
	int lo = 1 + (int)(id * (n - 2) / nthreads), hi = 1 + (int)((id + 1) * (n - 2) / nthreads);
	for (int it = 0; it < iters; it++) {
		double *src = it % 2 ? b : a, *dst = it % 2 ? a : b;
		for (int i = lo; i < hi; i++)
			for (int j = 1; j < n - 1; j++)
				dst[i * n + j] = 0.25 * (src[(i - 1) * n + j] + src[(i + 1) * n + j] + src[i * n + j - 1] +
							 src[i * n + j + 1]);
		pthread_barrier_wait(&bar);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	n = argc > 1 ? atoi(argv[1]) : 1024;
	iters = argc > 2 ? atoi(argv[2]) : 100;
	nthreads = argc > 3 ? atoi(argv[3]) : 2;
	a = calloc((size_t)n * n, sizeof *a);
	b = calloc((size_t)n * n, sizeof *b);
	for (int i = 0; i < n; i++)
		a[i] = b[i] = 1.0;
	pthread_barrier_init(&bar, NULL, (unsigned)nthreads);
	pthread_t t[64];
	for (long i = 0; i < nthreads; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	double s = 0;
	for (int i = 0; i < n * n; i++)
		s += a[i];
	printf("stencil %d %d: %.6f\n", n, iters, s);
	return 0;
}
