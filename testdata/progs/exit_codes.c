/* expect-exit: 0 */
/* Per-mode expectations (argv[1]):
 *   (none) / unknown -> exit status 0
 *   expect-exit[return]: 5   return 5 from main
 *   expect-exit[exit]: 9     exit(9) from a nested function; atexit handler runs
 *   expect-exit[abort]: SIGABRT  abort(): killed by signal 6 (no exit status)
 *   expect-exit[write]: 0    raw write(2) output without trailing newline
 * Output printed before the mode-specific action is flushed explicitly
 * where the process would otherwise lose it (abort). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int depth_reached;

static void on_exit_handler(void)
{
    printf("atexit handler: depth reached %d\n", depth_reached);
}

__attribute__((noinline)) static int nested_exit(int level)
{
    depth_reached = level;
    if (level > 100)
        return 0; /* not reached: level 4 always exits first */
    if (level == 4) {
        printf("exiting with 9 from level %d\n", level);
        exit(9);
    }
    return nested_exit(level + 1) + 1;
}

static void write_all(int fd, const char *s)
{
    size_t len = strlen(s);
    while (len > 0) {
        ssize_t w = write(fd, s, len);
        if (w <= 0)
            return;
        s += w;
        len -= (size_t)w;
    }
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "default";
    atexit(on_exit_handler);
    printf("mode: %s\n", mode);

    if (strcmp(mode, "return") == 0) {
        printf("returning 5 from main\n");
        return 5;
    }
    if (strcmp(mode, "exit") == 0) {
        int r = nested_exit(0);
        printf("not reached %d\n", r);
        return 1;
    }
    if (strcmp(mode, "abort") == 0) {
        printf("about to abort\n");
        fflush(stdout);
        abort();
    }
    if (strcmp(mode, "write") == 0) {
        fflush(stdout);
        write_all(1, "raw write line one\n");
        write_all(1, "raw write without newline");
        /* avoid the atexit handler appending buffered text after the raw tail */
        _exit(0);
    }
    printf("default mode, returning 0\n");
    return 0;
}
