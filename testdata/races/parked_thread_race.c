/* verdict: race
 * racy: parked_state
 * expect-exit: 0
 */
/* A worker records its state and parks in pause() for the rest of the
 * run; the main thread overwrites the state without any synchronisation
 * and returns while the worker is still parked. The two writes are
 * unordered in every run. To be sure the worker's write has happened
 * before the program ends, main watches /proc until some thread of the
 * process sits in the pause system call (reading /proc orders nothing). */
#define _GNU_SOURCE
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int parked_state;

static void *worker(void *arg)
{
    (void)arg;
    parked_state = 1;
    for (;;)
        pause();
    return NULL;
}

static int someone_paused(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return 1;
    int found = 0;
    struct dirent *e;
    while (!found && (e = readdir(d)) != NULL) {
        char path[300], buf[64] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/syscall", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        if (fgets(buf, sizeof buf, f))
            found = atoi(buf) == SYS_pause;
        fclose(f);
    }
    closedir(d);
    return found;
}

int main(void)
{
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    while (!someone_paused())
        usleep(1000);
    parked_state = 2; /* BUG: the worker's write is not ordered before this */
    printf("parked_thread_race: %d\n", parked_state);
    return 0;
}
