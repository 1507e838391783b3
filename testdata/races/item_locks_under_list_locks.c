/* verdict: race-free
 * needs: lib
 * expect-exit: 0
 */
/* A cache in memcached's style: each item has a lock of its own (1,024
 * of them), items sit on one of eight lists, each with a list lock, and
 * a statistics lock counts hits. Every item is taken sometimes alone and
 * sometimes under a list's lock, and released before or after the list's
 * lock; the statistics lock is taken under an item's. All data is
 * accessed under the lock that guards it: no race. The runtime follows
 * each thread's locksets in C from transitions the detector made before
 * (runtime/lockview.c); here there are thousands of them, more than a
 * thread's own cache holds, and the threads share what they learnt. A
 * lockset out of step with the detector's is an internal error, which
 * fails the test as a wrong verdict would. */
#include <pthread.h>
#include <stdio.h>

#define ITEMS 1024
#define LISTS 8
#define ROUNDS 4000
#define THREADS 3

struct item {
    pthread_mutex_t lock;
    long val, touched;
};

static struct item items[ITEMS];
static pthread_mutex_t list_lock[LISTS];
static long list_moves[LISTS];
static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
static long hits;

static unsigned next_rand(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return *s >> 8;
}

/* bump moves an item under its list's lock: the list lock first, then
 * the item's, released in either order. */
static void bump(unsigned *seed)
{
    unsigned k = next_rand(seed) % LISTS, i = next_rand(seed) % ITEMS;
    pthread_mutex_lock(&list_lock[k]);
    pthread_mutex_lock(&items[i].lock);
    list_moves[k]++;
    items[i].touched++;
    if (next_rand(seed) & 1) {
        pthread_mutex_unlock(&list_lock[k]);
        items[i].val++;
        pthread_mutex_unlock(&items[i].lock);
    } else {
        items[i].val++;
        pthread_mutex_unlock(&items[i].lock);
        pthread_mutex_unlock(&list_lock[k]);
    }
}

/* get reads an item under its own lock and counts the hit under the
 * statistics lock, taken inside. */
static long get(unsigned *seed)
{
    unsigned i = next_rand(seed) % ITEMS;
    pthread_mutex_lock(&items[i].lock);
    long v = items[i].val;
    pthread_mutex_lock(&stats_lock);
    hits++;
    pthread_mutex_unlock(&stats_lock);
    pthread_mutex_unlock(&items[i].lock);
    return v;
}

static void *worker(void *arg)
{
    unsigned seed = (unsigned)(long)arg * 7919u + 1u;
    long sum = 0;
    for (int r = 0; r < ROUNDS; r++) {
        bump(&seed);
        sum += get(&seed);
    }
    return (void *)(sum & 1);
}

int main(void)
{
    for (int i = 0; i < ITEMS; i++)
        pthread_mutex_init(&items[i].lock, NULL);
    for (int k = 0; k < LISTS; k++)
        pthread_mutex_init(&list_lock[k], NULL);
    pthread_t t[THREADS];
    for (long i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    long vals = 0, touched = 0, moves = 0;
    for (int i = 0; i < ITEMS; i++)
        vals += items[i].val, touched += items[i].touched;
    for (int k = 0; k < LISTS; k++)
        moves += list_moves[k];
    printf("items %ld %ld moves %ld hits %ld\n", vals, touched, moves, hits);
    return 0;
}
