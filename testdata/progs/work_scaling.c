/* expect-exit: 0 */
/* Memory work proportional to N (argv[1], default 1000): each of N
 * iterations touches global arrays, a global struct array and a fresh
 * heap block (malloc/free). Two threads split the iterations; the
 * checksum is combined after joining, so output is deterministic. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GLEN 512

struct rec {
    int id;
    long value;
    unsigned char tag[8];
};

static long garr[2][GLEN];
static struct rec grecs[2][64];
static unsigned long long results[2];

struct range {
    int tid;
    long begin, end;
};

static void *worker(void *p)
{
    const struct range *r = p;
    unsigned long long h = 1469598103934665603ULL;
    long *a = garr[r->tid];
    struct rec *recs = grecs[r->tid];
    for (long it = r->begin; it < r->end; it++) {
        size_t n = 16 + (size_t)(it % 48);
        long *blk = malloc(n * sizeof *blk);
        if (!blk)
            abort();
        for (size_t k = 0; k < n; k++)
            blk[k] = it * 31 + (long)k;
        for (int k = 0; k < 32; k++) {
            int idx = (int)((it * 7 + k * 13) % GLEN);
            a[idx] += blk[k % n] ^ k;
        }
        struct rec *rc = &recs[it % 64];
        rc->id = (int)it;
        rc->value += blk[n - 1];
        memset(rc->tag, (int)(it & 0xff), sizeof rc->tag);
        h = (h ^ (unsigned long long)(rc->value + rc->tag[3])) * 1099511628211ULL;
        free(blk);
    }
    results[r->tid] = h;
    return NULL;
}

int main(int argc, char **argv)
{
    long n = 1000;
    if (argc > 1) {
        n = strtol(argv[1], NULL, 10);
        if (n < 0)
            n = 0;
    }
    struct range rs[2] = { { 0, 0, n / 2 }, { 1, n / 2, n } };
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        if (pthread_create(&th[i], NULL, worker, &rs[i]) != 0)
            return 1;
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);

    long asum = 0;
    long rsum = 0;
    for (int t = 0; t < 2; t++) {
        for (int i = 0; i < GLEN; i++)
            asum += garr[t][i] % 100003;
        for (int i = 0; i < 64; i++)
            rsum += grecs[t][i].value % 65521 + grecs[t][i].id;
    }
    printf("N=%ld\n", n);
    printf("thread0 hash=%016llx\n", results[0]);
    printf("thread1 hash=%016llx\n", results[1]);
    printf("array checksum=%ld\n", asum);
    printf("record checksum=%ld\n", rsum);
    printf("combined=%016llx\n", results[0] * 3 ^ results[1] ^ (unsigned long long)(asum + rsum));
    return 0;
}
