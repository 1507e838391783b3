/* verdict: race
 * racy: orders_seen
 * needs: lib, cv
 * expect-exit: 0
 */
/* An order desk: the clerk thread fills an order, signals, and only then,
 * still under the desk's mutex, stamps the order's total and links it in
 * (a signal sent before the last writes of the critical section is
 * common: the waiter cannot run before the unlock anyway). The packer
 * waits on the condition, takes the order under the mutex and reads all
 * its fields after unlocking. Every field is ordered before the packer's
 * reads: the clerk's writes come before its unlock, the packer's reads
 * after its lock, and the packer read what the clerk linked in. The
 * clerk hands an order over only while the packer waits for one (a
 * second condition tells it so), so that every order comes with a
 * signal that wakes the packer. orders_seen is counted by both threads
 * without the mutex: the race. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct order {
    int id, items;
    long total;             /* written after the signal */
    struct order *next;
};

#define ORDERS 200

static pthread_mutex_t desk_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t desk_cv = PTHREAD_COND_INITIALIZER;  /* an order is on the desk */
static pthread_cond_t ready_cv = PTHREAD_COND_INITIALIZER; /* the packer waits */
static struct order *desk;  /* protected by desk_mu */
static int packer_waiting;  /* protected by desk_mu */
int orders_seen;            /* racy: both threads, no lock */
static long packed_total;

static void consume(int v) { __asm__ volatile("" : : "r"(v) : "memory"); }

static void *clerk(void *arg)
{
    (void)arg;
    for (int i = 0; i < ORDERS; i++) {
        struct order *o = malloc(sizeof *o);
        o->id = i;
        o->items = i % 7 + 1;
        pthread_mutex_lock(&desk_mu);
        while (!packer_waiting)
            pthread_cond_wait(&ready_cv, &desk_mu);
        packer_waiting = 0;
        pthread_cond_signal(&desk_cv);
        o->total = (long)o->items * 10;
        o->next = desk;
        desk = o;
        pthread_mutex_unlock(&desk_mu);
    }
    orders_seen = ORDERS;
    return NULL;
}

static void *packer(void *arg)
{
    (void)arg;
    for (int done = 0; done < ORDERS;) {
        pthread_mutex_lock(&desk_mu);
        while (!desk) {
            packer_waiting = 1;
            pthread_cond_signal(&ready_cv);
            pthread_cond_wait(&desk_cv, &desk_mu);
        }
        struct order *o = desk;
        desk = NULL;
        pthread_mutex_unlock(&desk_mu);
        while (o) {
            struct order *next = o->next;
            packed_total += o->total + o->items - o->items + (o->id & 0);
            free(o);
            o = next;
            done++;
        }
    }
    consume(orders_seen);
    return NULL;
}

int main(void)
{
    pthread_t c, p;
    pthread_create(&p, NULL, packer, NULL);
    pthread_create(&c, NULL, clerk, NULL);
    pthread_join(c, NULL);
    pthread_join(p, NULL);
    printf("packed %ld\n", packed_total);
    return 0;
}
