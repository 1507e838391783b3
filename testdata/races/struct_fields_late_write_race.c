/* verdict: race
 * racy: posted_job
 * needs: lib
 * expect-exit: 0
 */
/* posted_job is a struct of two ints, id and state, that share one
 * 8-byte granule. The poster fills both fields, then sets job_posted
 * under post_mu: a lock hand-off of the job. The worker polls job_posted
 * under the mutex and, once it is set, reads id and then state after
 * unlocking. The poster, after its unlock, sets state to 2 with no lock
 * and no further synchronisation: that write and the worker's read of
 * state are unordered in every schedule. The worker's read of id is
 * ordered after the poster's initial writes (the hand-off) and is no
 * race; neither is anything else. The race is on state alone, in a
 * granule whose other variable both threads use race-free. The poster
 * sleeps before its late write only so that the worker's reads mostly
 * come first: in that order hgrewrite once missed the race in every run
 * (the worker's read of state, made after its read of id took the
 * granule over, changed nothing and was not remembered). The verdict
 * holds in every schedule. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

struct job {
    int id;
    int state;
};

struct job posted_job;
int job_posted;
long seen;
pthread_mutex_t post_mu = PTHREAD_MUTEX_INITIALIZER;

static void *poster(void *arg)
{
    (void)arg;
    posted_job.id = 41;
    posted_job.state = 1;
    pthread_mutex_lock(&post_mu);
    job_posted = 1;
    pthread_mutex_unlock(&post_mu);
    usleep(20000);
    posted_job.state = 2; /* races with the worker's read of state */
    return NULL;
}

static void *worker(void *arg)
{
    (void)arg;
    int ready = 0;
    while (!ready) {
        pthread_mutex_lock(&post_mu);
        ready = job_posted;
        pthread_mutex_unlock(&post_mu);
    }
    seen = posted_job.id;
    seen += posted_job.state;
    return NULL;
}

int main(void)
{
    pthread_t p, w;
    pthread_create(&w, NULL, worker, NULL);
    pthread_create(&p, NULL, poster, NULL);
    pthread_join(p, NULL);
    pthread_join(w, NULL);
    printf("struct_fields_late_write_race: done\n");
    return 0;
}
