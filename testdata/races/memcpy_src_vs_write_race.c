/* verdict: race
 * racy: source_buf
 * needs: lib
 * expect-exit: 0
 */
/* One thread snapshots source_buf with memcpy (a read of the whole buffer,
 * size only known at run time, so gcc calls libc's memcpy at every
 * optimisation level) while another thread stores into the middle of
 * source_buf without synchronisation. The copy's read races with the
 * plain write. snapshot is private to the copying thread until the join. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>

char source_buf[2048];
char snapshot[2048];
size_t snapshot_len = sizeof snapshot;

static void *copier(void *arg)
{
    (void)arg;
    memcpy(snapshot, source_buf, snapshot_len);
    return NULL;
}

static void *writer(void *arg)
{
    (void)arg;
    source_buf[1000] = 'w';     /* BUG: races with the memcpy */
    return NULL;
}

int main(void)
{
    pthread_t a, b;
    memset(source_buf, 'a', sizeof source_buf);
    pthread_create(&a, NULL, copier, NULL);
    pthread_create(&b, NULL, writer, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("memcpy_src_vs_write_race: %c\n", snapshot[0]);
    return 0;
}
