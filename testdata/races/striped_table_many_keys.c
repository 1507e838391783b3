/* verdict: race-free
 * needs: lib
 * expect-exit: 0
 */
/* A hash table of 4,096 chains under 64 striped mutexes, as a cache is
 * kept: two threads insert 20,000 keys and update their counts, every
 * access to a node and a chain head under the chain's stripe; each
 * thread adds what it saw to a total of its own. The table's variables
 * outnumber the ways hgrewrite keeps for published writes (eight per
 * slot of 8,192), so publications keep evicting entries: into the
 * overflow, or, for one the overflow covers already, in place by the
 * C side (runtime/regionpub.c). Nothing races: each node is used under
 * one stripe only, and a node is linked under its stripe before any
 * other thread can reach it. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define CHAINS 4096
#define STRIPES 64
#define KEYS 20000

struct entry {
    long key, count, seen_by_other;
    struct entry *next;
};

static struct entry *chains[CHAINS];
static pthread_mutex_t stripes[STRIPES];
static long totals[2];

static void touch(long key, int self)
{
    unsigned h = (unsigned)(key * 2654435761u) % CHAINS;
    pthread_mutex_t *m = &stripes[h % STRIPES];
    pthread_mutex_lock(m);
    for (struct entry *e = chains[h]; e; e = e->next)
        if (e->key == key) {
            e->count++;
            totals[self] += e->seen_by_other;
            e->seen_by_other = self;
            pthread_mutex_unlock(m);
            return;
        }
    struct entry *e = malloc(sizeof *e);
    e->key = key;
    e->count = 1;
    e->seen_by_other = 0;
    e->next = chains[h];
    chains[h] = e;
    pthread_mutex_unlock(m);
}

static void *user(void *arg)
{
    int self = (int)(long)arg;
    unsigned long seed = (unsigned long)self * 7919 + 1;
    for (long i = 0; i < 120000; i++) {
        seed = seed * 6364136223846793005ul + 1442695040888963407ul;
        touch((long)((seed >> 33) % KEYS), self);
    }
    return NULL;
}

int main(void)
{
    for (int i = 0; i < STRIPES; i++)
        pthread_mutex_init(&stripes[i], NULL);
    pthread_t t[2];
    for (long i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, user, (void *)i);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    long n = 0;
    for (int i = 0; i < CHAINS; i++)
        for (struct entry *e = chains[i]; e; e = e->next)
            n += e->count;
    printf("striped_table_many_keys: %ld\n", n);
    return 0;
}
