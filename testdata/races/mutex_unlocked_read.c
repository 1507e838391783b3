/* verdict: race
 * racy: account_balance
 * needs: lib
 * expect-exit: 0
 */
/* The depositor always updates account_balance under balance_mu, but the
 * auditor reads it without taking the lock ("it's only a read"). The
 * auditor never acquires balance_mu, so its read is unordered with the
 * depositor's writes in every run. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

long account_balance;
pthread_mutex_t balance_mu = PTHREAD_MUTEX_INITIALIZER;

static void consume(long v) { __asm__ __volatile__("" : : "r"(v)); }

static void *depositor(void *arg)
{
    (void)arg;
    for (int i = 0; i < 200; i++) {
        pthread_mutex_lock(&balance_mu);
        account_balance += 10;
        pthread_mutex_unlock(&balance_mu);
    }
    return NULL;
}

static void *auditor(void *arg)
{
    (void)arg;
    consume(account_balance);   /* BUG: no lock */
    return NULL;
}

int main(void)
{
    pthread_t d, a;
    pthread_create(&d, NULL, depositor, NULL);
    pthread_create(&a, NULL, auditor, NULL);
    pthread_join(d, NULL);
    pthread_join(a, NULL);
    printf("mutex_unlocked_read: balance %ld\n", account_balance);
    return 0;
}
