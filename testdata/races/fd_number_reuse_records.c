/* verdict: race-free
 * needs: lib
 * expect-exit: 0
 */
/* Two threads each open a descriptor (dup of /dev/null: the kernel gives
 * the lowest free number), update the record the program keeps for that
 * number, and close it, again and again. A number is one thread's from
 * the call that returns it to its close, and the kernel hands it to the
 * other thread only after that close (its descriptor table is locked
 * for both), so the two threads use a record in turn, as a server's
 * workers use the connection record of a descriptor number
 * (memcached's conns[fd]). Nothing in the program's memory orders them:
 * only the kernel does. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#define RECORDS 256
#define ROUNDS 3000

struct record {
    long owner, uses;
};
static struct record records[RECORDS];
static int devnull;
static long overflow[2];

static void *user(void *arg)
{
    long id = (long)arg;
    for (int i = 0; i < ROUNDS; i++) {
        int fd = dup(devnull);
        if (fd < 0) {
            perror("dup");
            return NULL;
        }
        if (fd < RECORDS) {
            records[fd].owner = id;
            records[fd].uses++;
        } else {
            overflow[id]++;
        }
        close(fd);
    }
    return NULL;
}

int main(void)
{
    devnull = open("/dev/null", O_RDONLY);
    pthread_t t[2];
    for (long i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, user, (void *)i);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    long total = overflow[0] + overflow[1];
    for (int i = 0; i < RECORDS; i++)
        total += records[i].uses;
    printf("fd_number_reuse_records: %ld\n", total);
    close(devnull);
    return 0;
}
