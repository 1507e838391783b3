/* verdict: race-free
 * needs: lib
 * expect-exit: 0
 */
// A session registry: reader threads look sessions up and use them under
// the registry mutex; a reaper unlinks each session under the mutex and
// deletes it after unlocking (the usual way to keep the critical section
// short). A reader that found a session finished with it before the
// reaper could take the mutex to unlink it, so the delete is ordered after
// every use. The readers write nothing in their critical sections.
#include <cstdio>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

struct Session {
    virtual ~Session() {}
    virtual long score() const { return id * 3 + hits; }
    long id = 0;
    long hits = 1;
};

struct TlsSession : Session {
    long score() const override { return id * 5 + cipher; }
    long cipher = 7;
};

static std::mutex registry_mu;
static std::map<long, Session *> registry;

static void reader(long seed, long *out)
{
    long sum = 0;
    for (int i = 0; i < 3000; i++) {
        std::lock_guard<std::mutex> g(registry_mu);
        auto it = registry.find((seed + i) % 48);
        if (it != registry.end())
            sum += it->second->score();
    }
    *out = sum;
}

static void reaper()
{
    for (long k = 0; k < 48; k++) {
        Session *s = nullptr;
        {
            std::lock_guard<std::mutex> g(registry_mu);
            auto it = registry.find(k);
            if (it != registry.end()) {
                s = it->second;
                registry.erase(it);
            }
        }
        delete s;
        std::this_thread::yield();
    }
}

int main()
{
    for (long k = 0; k < 48; k++) {
        Session *s = (k % 2) ? new TlsSession : new Session;
        s->id = k;
        registry[k] = s;
    }
    long sums[3] = {0, 0, 0};
    std::vector<std::thread> threads;
    for (long r = 0; r < 3; r++)
        threads.emplace_back(reader, r * 7, &sums[r]);
    threads.emplace_back(reaper);
    for (auto &t : threads)
        t.join();
    std::printf("cxx_registry_remove_then_delete: %zu left\n", registry.size());
    return 0;
}
