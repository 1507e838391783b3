/* verdict: race
 * racy: heap:alloc_scoreboard
 * needs: lib
 * expect-exit: 0
 */
/* main allocates a scoreboard block (alloc_scoreboard) and passes the
 * pointer to two threads as their argument; both threads update
 * board[0] without synchronisation. The pointer itself is handed over by
 * pthread_create (not racy); the block's first element races in every
 * run. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static int *alloc_scoreboard(void)
{
    int *b = calloc(16, sizeof *b);
    if (!b)
        abort();
    return b;
}

static void *player(void *arg)
{
    int *board = arg;
    for (int i = 0; i < 500; i++)
        board[0]++;             /* BUG: no synchronisation */
    return NULL;
}

int main(void)
{
    pthread_t a, b;
    int *board = alloc_scoreboard();
    pthread_create(&a, NULL, player, board);
    pthread_create(&b, NULL, player, board);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    free(board);
    puts("heap_unsync_two_threads: done");
    return 0;
}
