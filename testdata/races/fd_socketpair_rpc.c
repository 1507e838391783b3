/* verdict: race-free
 * needs: lib
 * expect-exit: 0
 */
/* A client thread and a server thread talk over a socketpair: the client
 * fills a request struct in shared memory and sends a one-byte "go"; the
 * server reads the request, writes the reply into the same struct and
 * sends a byte back; an eventfd tells the client when the server has shut
 * down. Every hand-off goes through the kernel (send/recv, eventfd
 * write/read); no lock, no atomic. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

struct call {
    int op;
    long args[2];
    long result;
};

static struct call shared_call;
static int sv[2];
static int done_fd;

static void *server(void *arg)
{
    (void)arg;
    char b;
    while (recv(sv[1], &b, 1, 0) == 1 && b == 'g') {
        long r = shared_call.op == 0 ? shared_call.args[0] + shared_call.args[1]
                                     : shared_call.args[0] * shared_call.args[1];
        shared_call.result = r;
        if (send(sv[1], "r", 1, 0) != 1)
            break;
    }
    uint64_t one = 1;
    if (write(done_fd, &one, sizeof one) != sizeof one)
        return NULL;
    return NULL;
}

int main(void)
{
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
        return 1;
    done_fd = eventfd(0, 0);
    pthread_t s;
    pthread_create(&s, NULL, server, NULL);
    long total = 0;
    for (int i = 0; i < 50; i++) {
        shared_call.op = i % 2;
        shared_call.args[0] = i;
        shared_call.args[1] = 3;
        char b;
        if (send(sv[0], "g", 1, 0) != 1 || recv(sv[0], &b, 1, 0) != 1)
            return 1;
        total += shared_call.result;
    }
    if (send(sv[0], "q", 1, 0) != 1)
        return 1;
    uint64_t v;
    if (read(done_fd, &v, sizeof v) != sizeof v)
        return 1;
    shared_call.op = -1; /* the server has finished: the eventfd says so */
    pthread_detach(s);
    printf("fd_socketpair_rpc: %ld\n", total);
    return 0;
}
