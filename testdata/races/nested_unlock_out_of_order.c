/* verdict: race-free
 * needs: lib
 * expect-exit: 0
 */
/* Locks released in another order than they were taken, inside a
 * region that a thread's own lock keeps open for a whole pass, as in
 * memcached's LRU maintainer: it takes a list's lock, then an item's,
 * releases the list's lock first, moves the item under a second list's
 * lock and returns the node the worker handed back to a free list, under
 * the slab lock, before it releases the item's lock. The
 * worker takes nodes from the free list under the slab lock, fills them
 * outside any lock and hands them back through a queue, eight at a time. Every node the
 * worker fills was put on the free list before the worker took the slab
 * lock that gave it out: no race. (Until 2026-11-29 the detector only
 * looked for the latest lock taken at an unlock; the list lock's place
 * stayed taken, a few nodes filled the places, and the free list's
 * writes went unpublished: a report in every run.) */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>

#define NODES 64
#define FILLS 4000
#define BATCH 8

struct node {
    struct node *next;
    long key, val;
};

static pthread_mutex_t maint_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t hot_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t cold_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t item_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t slab_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static struct node nodes[NODES];
static struct node *free_list, *queue;
static long hot_len, cold_len, moved;
static int worker_done;

static void *maintainer(void *arg)
{
    (void)arg;
    for (int done = 0; !done;) {
        pthread_mutex_lock(&maint_lock);
        pthread_mutex_lock(&queue_lock);
        struct node *back = queue;
        queue = NULL;
        done = worker_done && !back;
        pthread_mutex_unlock(&queue_lock);
        while (back) {
            struct node *n = back;
            back = n->next;
            /* move its item from the hot list to the cold one */
            pthread_mutex_lock(&hot_lock);
            pthread_mutex_lock(&item_lock);
            hot_len--;
            pthread_mutex_unlock(&hot_lock);
            pthread_mutex_lock(&cold_lock);
            cold_len++;
            pthread_mutex_unlock(&cold_lock);
            moved++;
            /* and free the node, the item's lock still held */
            pthread_mutex_lock(&slab_lock);
            n->next = free_list;
            free_list = n;
            pthread_mutex_unlock(&slab_lock);
            pthread_mutex_unlock(&item_lock);
        }
        pthread_mutex_unlock(&maint_lock);
    }
    return NULL;
}

static void *worker(void *arg)
{
    (void)arg;
    for (long r = 0, filled = 0; filled < FILLS; r++) {
        struct node *batch = NULL; /* a few at a time, as a burst of sets */
        for (int k = 0; k < BATCH; k++, filled++) {
            pthread_mutex_lock(&slab_lock);
            struct node *n = free_list;
            if (n)
                free_list = n->next;
            pthread_mutex_unlock(&slab_lock);
            if (!n)
                break;
            n->key = r; /* outside any lock, as after an allocation */
            n->val = r * 3;
            n->next = batch;
            batch = n;
        }
        if (!batch) {
            sched_yield(); /* all handed back: the maintainer's turn */
            continue;
        }
        pthread_mutex_lock(&queue_lock);
        struct node *last = batch;
        while (last->next)
            last = last->next;
        last->next = queue;
        queue = batch;
        pthread_mutex_unlock(&queue_lock);
    }
    pthread_mutex_lock(&queue_lock);
    worker_done = 1;
    pthread_mutex_unlock(&queue_lock);
    return NULL;
}

int main(void)
{
    for (int i = 0; i < NODES; i++) {
        nodes[i].next = free_list;
        free_list = &nodes[i];
    }
    pthread_t m, w;
    pthread_create(&m, NULL, maintainer, NULL);
    pthread_create(&w, NULL, worker, NULL);
    pthread_join(w, NULL);
    pthread_join(m, NULL);
    printf("moved %s\n", moved > 0 ? "some" : "none");
    return 0;
}
