/* verdict: race
 * racy: heap:main
 * needs: lib
 * expect-exit: 0
 */
// The registry bug: a reader looks a session up under the registry mutex
// but reads its counter after unlocking. The reaper unlinks the session
// under the mutex and resets the counter before it deletes the session;
// the reader's late read and the reset are unordered (the reader's
// critical section is ordered before the reaper's, but the read comes
// after it). Two semaphores make the overlap certain and keep the program
// safe: the reaper waits until the reader has found the session, and
// deletes it only after the reader's read.
#include <semaphore.h>
#include <cstdio>
#include <map>
#include <mutex>
#include <thread>

struct Session {
    virtual ~Session() {}
    long id = 0;
    long hits = 0;
};

static std::mutex registry_mu;
static std::map<long, Session *> registry;
static sem_t found, used;
static long seen;

static void reader()
{
    Session *s = nullptr;
    {
        std::lock_guard<std::mutex> g(registry_mu);
        auto it = registry.find(1);
        if (it != registry.end())
            s = it->second;
    }
    sem_post(&found);
    if (s)
        seen = s->hits; // BUG: the session may be unlinked by now
    sem_post(&used);
}

static void reaper()
{
    sem_wait(&found);
    Session *s = nullptr;
    {
        std::lock_guard<std::mutex> g(registry_mu);
        auto it = registry.find(1);
        s = it->second;
        registry.erase(it);
    }
    s->hits = 0; // reset the statistics before the session goes
    sem_wait(&used);
    delete s;
}

int main()
{
    sem_init(&found, 0, 0);
    sem_init(&used, 0, 0);
    Session *s = new Session;
    s->id = 1;
    s->hits = 5;
    registry[1] = s;
    std::thread r(reader), p(reaper);
    r.join();
    p.join();
    std::printf("cxx_registry_use_after_unlock_race: %ld\n", seen >= 0 ? 1L : 0L);
    return 0;
}
