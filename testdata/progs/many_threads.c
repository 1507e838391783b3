/* expect-exit: 0 */
/* 200 short-lived threads created in batches of 20 (each batch joined),
 * each adding to a mutex-protected global; plus pthread_once, a 4-thread
 * pthread_barrier, sem_t semaphores and a pthread_rwlock. Only totals
 * computed after joins are printed. */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>

#define TOTAL 200
#define BATCH 20
#define BARRIER_THREADS 4
#define ROUNDS 5

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static long total;
static long per_thread_value[TOTAL];

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int init_calls;
static int table[64];

static pthread_barrier_t barrier;
static int stage[BARRIER_THREADS][ROUNDS];
static long round_sums[ROUNDS];

static sem_t slots;      /* counting semaphore: at most 2 in the critical area */
static sem_t done_sem;   /* signalled by each barrier thread when finished */
static int in_area, max_in_area;

static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static long shared_map[16];
static long reads_ok;

static void init_table(void)
{
    init_calls++;
    for (int i = 0; i < 64; i++)
        table[i] = i * i % 61;
}

static void *short_worker(void *p)
{
    long id = (long)p;
    pthread_once(&once, init_table);
    long v = id * 3 + table[id % 64];
    per_thread_value[id] = v;
    pthread_mutex_lock(&mu);
    total += v;
    pthread_mutex_unlock(&mu);
    return NULL;
}

static void *barrier_worker(void *p)
{
    int id = (int)(long)p;
    for (int r = 0; r < ROUNDS; r++) {
        stage[id][r] = (id + 1) * (r + 1);
        int s = pthread_barrier_wait(&barrier);
        if (s == PTHREAD_BARRIER_SERIAL_THREAD) {
            long sum = 0;
            for (int k = 0; k < BARRIER_THREADS; k++)
                sum += stage[k][r];
            round_sums[r] = sum;
        }
        pthread_barrier_wait(&barrier); /* round_sums[r] complete before next round */

        sem_wait(&slots);
        pthread_mutex_lock(&mu);
        if (++in_area > max_in_area)
            max_in_area = in_area;
        pthread_mutex_unlock(&mu);
        pthread_rwlock_wrlock(&rw);
        shared_map[(id * 5 + r) % 16] += round_sums[r];
        pthread_rwlock_unlock(&rw);
        pthread_mutex_lock(&mu);
        in_area--;
        pthread_mutex_unlock(&mu);
        sem_post(&slots);

        pthread_rwlock_rdlock(&rw);
        long snapshot = 0;
        for (int k = 0; k < 16; k++)
            snapshot += shared_map[k];
        pthread_rwlock_unlock(&rw);
        if (snapshot > 0) {
            pthread_mutex_lock(&mu);
            reads_ok++;
            pthread_mutex_unlock(&mu);
        }
    }
    sem_post(&done_sem);
    return NULL;
}

int main(void)
{
    pthread_t th[BATCH];
    for (int b = 0; b < TOTAL / BATCH; b++) {
        for (int i = 0; i < BATCH; i++)
            if (pthread_create(&th[i], NULL, short_worker, (void *)(long)(b * BATCH + i)) != 0)
                return 1;
        for (int i = 0; i < BATCH; i++)
            pthread_join(th[i], NULL);
    }
    long check = 0;
    for (int i = 0; i < TOTAL; i++)
        check += per_thread_value[i];
    printf("short threads: total=%ld recomputed=%ld\n", total, check);
    printf("pthread_once init calls: %d\n", init_calls);

    pthread_barrier_init(&barrier, NULL, BARRIER_THREADS);
    sem_init(&slots, 0, 2);
    sem_init(&done_sem, 0, 0);
    pthread_t bt[BARRIER_THREADS];
    for (long i = 0; i < BARRIER_THREADS; i++)
        pthread_create(&bt[i], NULL, barrier_worker, (void *)i);
    for (int i = 0; i < BARRIER_THREADS; i++)
        sem_wait(&done_sem);
    for (int i = 0; i < BARRIER_THREADS; i++)
        pthread_join(bt[i], NULL);

    for (int r = 0; r < ROUNDS; r++)
        printf("round %d sum=%ld\n", r, round_sums[r]);
    long mapsum = 0;
    for (int k = 0; k < 16; k++)
        mapsum += shared_map[k];
    printf("rwlock map sum=%ld reads_ok=%ld\n", mapsum, reads_ok);
    printf("semaphore limit respected: %s\n", max_in_area <= 2 && max_in_area >= 1 ? "yes" : "no");
    int sv = -1;
    sem_getvalue(&slots, &sv);
    printf("final semaphore value: %d\n", sv);
    pthread_barrier_destroy(&barrier);
    sem_destroy(&slots);
    sem_destroy(&done_sem);
    return 0;
}
