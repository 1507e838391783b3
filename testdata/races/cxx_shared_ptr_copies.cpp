/* verdict: race-free
 * needs: lib
 * expect-exit: 0
 */
// Two threads each receive a std::shared_ptr<const Config> by value and
// copy/destroy it 1000 times while reading the (immutable) pointee. The
// reference count is updated with atomic read-modify-writes ("lock xadd")
// and its fast-path checks are atomic loads; the pointee is only read.
// main keeps its own reference until after the joins, so the object is
// destroyed by main.
#include <cstdio>
#include <memory>
#include <thread>

struct Config {
    int values[16];
    Config() { for (int i = 0; i < 16; i++) values[i] = i * 2; }
    ~Config() { for (int i = 0; i < 16; i++) values[i] = -1; }
};

long g_sums[2];

static void reader(std::shared_ptr<const Config> cfg, int slot)
{
    long sum = 0;
    for (int i = 0; i < 1000; i++) {
        std::shared_ptr<const Config> copy = cfg;
        sum += copy->values[i % 16];
    }
    g_sums[slot] = sum;
}

int main()
{
    auto cfg = std::make_shared<const Config>();
    std::thread a(reader, cfg, 0);
    std::thread b(reader, cfg, 1);
    a.join();
    b.join();
    long uses = cfg.use_count();
    cfg.reset();
    std::printf("cxx_shared_ptr_copies: %ld %ld uses %ld\n", g_sums[0], g_sums[1], uses);
    return 0;
}
