/* verdict: race
 * racy: heap:make_packet
 * needs: lib
 * expect-exit: 0
 */
/* A sender writes a packet's address into a pipe and then, a bug, stamps
 * the packet's sequence field after sending it. The receiver reads the
 * whole packet as soon as it has the pointer, so the stamp and the
 * receiver's read of the field are unordered in every run (the pipe only
 * orders what the sender did before the write). The receiver acknowledges
 * each packet through a second pipe before the sender continues, so the
 * packet is never freed while the stamp is pending. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct packet {
    long seq;
    long body[3];
};

static int to_receiver[2], acks[2];
static long received_sum;

__attribute__((noinline)) static struct packet *make_packet(long n)
{
    struct packet *p = calloc(1, sizeof *p);
    if (!p)
        abort();
    for (int i = 0; i < 3; i++)
        p->body[i] = n + i;
    return p;
}

static void *receiver(void *arg)
{
    (void)arg;
    for (;;) {
        struct packet *p;
        if (read(to_receiver[0], &p, sizeof p) != sizeof p || p == NULL)
            break;
        received_sum += p->seq + p->body[0];
        char ack = 1;
        if (write(acks[1], &ack, 1) != 1)
            break;
    }
    return NULL;
}

int main(void)
{
    if (pipe(to_receiver) != 0 || pipe(acks) != 0)
        return 1;
    pthread_t r;
    pthread_create(&r, NULL, receiver, NULL);
    struct packet *sent[20];
    for (long n = 0; n < 20; n++) {
        struct packet *p = make_packet(n);
        if (write(to_receiver[1], &p, sizeof p) != sizeof p)
            return 1;
        p->seq = n; /* too late: the receiver may be reading it now */
        char ack;
        if (read(acks[0], &ack, 1) != 1)
            return 1;
        sent[n] = p;
    }
    struct packet *stop = NULL;
    if (write(to_receiver[1], &stop, sizeof stop) != sizeof stop)
        return 1;
    pthread_join(r, NULL);
    for (int n = 0; n < 20; n++)
        free(sent[n]);
    printf("fd_pipe_write_after_send_race: done\n");
    return 0;
}
