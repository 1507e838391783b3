/* expect-exit: 0 */
/* The descriptors a program sees: how many are open below 1000 when main
 * starts, and which number the first open() returns. The runtime keeps
 * its own (a copy of stderr) far above, and nothing of the Go runtime's
 * start-up may linger. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return 1;
    int low = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        int fd = atoi(e->d_name);
        if (fd != dirfd(d) && fd < 1000)
            low++;
    }
    closedir(d);
    int first = open("/dev/null", O_RDONLY);
    printf("open below 1000 at start: %d, first open returns %d\n", low, first);
    close(first);
    return 0;
}
