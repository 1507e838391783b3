/* verdict: race
 * racy: heap:new_node
 * figure: dissertation fig. 7.8
 * needs: lib
 * expect-exit: 0
 */
/* Fig. 7.8: a small while loop walking a linked list ("runp = runp->next")
 * is NOT a spinning read loop: the loop variable is modified in the body.
 * The walker reads every node's dso_handle while the writer stores into
 * the dso_handle of the sixth node without synchronisation. The nodes are
 * built by main (allocated by new_node) before the threads are created;
 * the race is on that one node in every run. A detector that mistakes the
 * walk for a spin loop would draw a false edge from the writer and miss
 * it. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct node { struct node *next; void *dso_handle; int id; };

struct node *list_head;
struct node *victim_node;
int wanted_token, other_token;

static void consume(const void *p) { __asm__ __volatile__("" : : "r"(p)); }

__attribute__((noinline)) static struct node *new_node(int id)
{
    struct node *n = malloc(sizeof *n);
    if (!n)
        abort();
    n->id = id;
    return n;
}

static void *walker(void *arg)
{
    void *dso_handle = &wanted_token;   /* never stored in the list */
    struct node *runp = list_head, *lastp = NULL;
    (void)arg;
    while (runp != NULL)
        if (runp->dso_handle == dso_handle)
            break;
        else {
            lastp = runp;
            runp = runp->next;
        }
    consume(lastp);
    return NULL;
}

static void *writer(void *arg)
{
    (void)arg;
    victim_node->dso_handle = &other_token;     /* BUG: unsynchronised */
    return NULL;
}

int main(void)
{
    struct node *tail = NULL;
    for (int i = 0; i < 10; i++) {
        struct node *n = new_node(i);
        n->next = NULL;
        n->dso_handle = NULL;
        if (tail)
            tail->next = n;
        else
            list_head = n;
        tail = n;
        if (i == 5)
            victim_node = n;
    }
    pthread_t w, r;
    pthread_create(&w, NULL, walker, NULL);
    pthread_create(&r, NULL, writer, NULL);
    pthread_join(w, NULL);
    pthread_join(r, NULL);
    while (list_head) {
        struct node *n = list_head;
        list_head = n->next;
        free(n);
    }
    puts("list_walk_not_spin_fig7_8: done");
    return 0;
}
