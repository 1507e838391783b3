/* verdict: race-free
 * needs: lib
 * expect-exit: 0
 */
/* A scratch mapping given back and mapped again by another thread: the
 * first thread fills a page it mapped and unmaps it; the second maps a
 * page later (the kernel usually returns the same address) and fills it.
 * Nothing orders the two threads, and nothing needs to: the second
 * mapping is new memory. The threads run one after the other (the second
 * starts after the first has exited), so that the address is reused. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGE_WORDS 1024

static long fill(void)
{
    long *p = mmap(NULL, PAGE_WORDS * sizeof(long), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return -1;
    long sum = 0;
    for (int i = 0; i < PAGE_WORDS; i++) {
        p[i] = i;
        sum += p[i];
    }
    munmap(p, PAGE_WORDS * sizeof(long));
    return sum;
}

static void *scratch(void *arg)
{
    (void)arg;
    fill(); /* its result stays here: passing it on would order the threads */
    return NULL;
}

static void *worker(void *arg)
{
    *(long *)arg = fill();
    return NULL;
}

int main(void)
{
    long b = 0;
    pthread_t t1, t2;
    pthread_create(&t1, NULL, scratch, NULL);
    pthread_detach(t1);
    usleep(100000); /* not synchronisation: only lets t1 finish first */
    pthread_create(&t2, NULL, worker, &b);
    pthread_join(t2, NULL);
    printf("mmap_reuse_other_thread: %ld\n", b);
    return 0;
}
