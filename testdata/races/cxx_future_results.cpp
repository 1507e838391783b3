/* verdict: race-free
 * needs: lib
 * expect-exit: 0
 */
// Work split with std::async and std::promise, as application code does
// it: each task builds a heap result and returns it through its future;
// a separate thread fulfils a promise with a configuration block. The
// consumer reads every result after get(). libstdc++ synchronises the
// future's state with an atomic exchange and, when the consumer is already
// waiting, a futex.
#include <cstdio>
#include <future>
#include <memory>
#include <thread>
#include <vector>

struct Histogram {
    long bins[16];
};

static std::unique_ptr<Histogram> count_range(int from, int to)
{
    auto h = std::make_unique<Histogram>();
    for (int i = from; i < to; i++)
        h->bins[(i * 7) % 16]++;
    return h;
}

struct Config {
    int scale;
    int offset;
};

int main()
{
    std::vector<std::future<std::unique_ptr<Histogram>>> parts;
    for (int p = 0; p < 4; p++)
        parts.push_back(std::async(std::launch::async, count_range, p * 1000, (p + 1) * 1000));
    std::promise<Config *> config_promise;
    std::future<Config *> config_future = config_promise.get_future();
    std::thread loader([&config_promise] {
        Config *c = new Config{3, 1};
        config_promise.set_value(c);
    });
    Config *cfg = config_future.get();
    long total = 0;
    for (auto &f : parts) {
        auto h = f.get();
        for (long b : h->bins)
            total += b * cfg->scale + cfg->offset;
    }
    loader.join();
    delete cfg;
    std::printf("cxx_future_results: %ld\n", total);
    return 0;
}
