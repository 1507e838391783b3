/* verdict: race-free
 * needs: lib
 * expect-exit: 0
 */
// Configuration reload: readers look settings up in the current map under
// a mutex; the reloader builds a new map without the lock, swaps the
// pointer under the mutex and destroys the old map after unlocking. A
// reader that used the old map did so before the swap (it held the mutex);
// one that reads after the swap sees the new map, built before the swap.
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using Config = std::map<std::string, long>;

static std::mutex config_mu;
static Config *config;

static Config *build(long generation)
{
    auto *c = new Config;
    for (int i = 0; i < 16; i++)
        (*c)["key" + std::to_string(i)] = generation * 100 + i;
    return c;
}

static void reader(long *out)
{
    long sum = 0;
    for (int i = 0; i < 2000; i++) {
        std::lock_guard<std::mutex> g(config_mu);
        auto it = config->find("key" + std::to_string(i % 16));
        if (it != config->end())
            sum += it->second;
    }
    *out = sum;
}

static void reloader()
{
    for (long gen = 1; gen <= 20; gen++) {
        Config *fresh = build(gen);
        Config *old;
        {
            std::lock_guard<std::mutex> g(config_mu);
            old = config;
            config = fresh;
        }
        delete old;
        std::this_thread::yield();
    }
}

int main()
{
    config = build(0);
    long sums[2] = {0, 0};
    std::vector<std::thread> threads;
    threads.emplace_back(reader, &sums[0]);
    threads.emplace_back(reader, &sums[1]);
    threads.emplace_back(reloader);
    for (auto &t : threads)
        t.join();
    std::printf("cxx_config_swap_destroy_outside: %zu keys\n", config->size());
    delete config;
    return 0;
}
