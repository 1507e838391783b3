/* verdict: race
 * racy: shared_total
 * needs: lib
 * expect-exit: 0
 */
/* Two workers each keep a table of their own, guarded by a table lock,
 * and update their own statistics under a statistics lock taken inside
 * it or alone. Both also add to shared_total, each under its own locks:
 * worker A under its table lock (sometimes with its statistics lock
 * too), worker B under its own two. No lock is common to the two, so the
 * updates of shared_total race in every run. The other variables are
 * race-free. (The runtime tells in C that one lockset is part of another,
 * {table} of {table, stats}; here it must tell that {table_a} is no part
 * of {table_b, stats_b}.) */
#include <pthread.h>
#include <stdio.h>

#define ROUNDS 2000

struct worker {
    pthread_mutex_t table_lock, stats_lock;
    long table[64];
    long stats;
};

static struct worker workers[2] = {
    {PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, {0}, 0},
    {PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, {0}, 0},
};
long shared_total;

static void *work(void *arg)
{
    struct worker *w = arg;
    for (int r = 0; r < ROUNDS; r++) {
        pthread_mutex_lock(&w->table_lock);
        w->table[r % 64]++;
        shared_total++;
        if (r % 2) {
            pthread_mutex_lock(&w->stats_lock);
            w->stats++;
            shared_total++;
            pthread_mutex_unlock(&w->stats_lock);
        }
        pthread_mutex_unlock(&w->table_lock);
        pthread_mutex_lock(&w->stats_lock);
        w->stats++;
        pthread_mutex_unlock(&w->stats_lock);
    }
    return NULL;
}

int main(void)
{
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, work, &workers[i]);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    long sum = 0;
    for (int i = 0; i < 2; i++) {
        for (int k = 0; k < 64; k++)
            sum += workers[i].table[k];
        sum += workers[i].stats;
    }
    printf("tables and stats %ld\n", sum);
    return 0;
}
