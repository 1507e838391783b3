/* verdict: race-free
 * needs: lib
 * expect-exit: 0
 */
// std::thread workers append to a std::vector and bump a counter, both
// guarded by one std::mutex through std::lock_guard (std::mutex is a
// pthread mutex underneath).
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>

std::mutex g_log_mu;
std::vector<int> g_log;
long g_log_sum;

static void worker(int id)
{
    for (int i = 0; i < 200; i++) {
        std::lock_guard<std::mutex> guard(g_log_mu);
        g_log.push_back(id * 1000 + i);
        g_log_sum += i;
    }
}

int main()
{
    std::vector<std::thread> threads;
    for (int id = 0; id < 3; id++)
        threads.emplace_back(worker, id);
    for (auto &t : threads)
        t.join();
    std::printf("cxx_thread_mutex: %zu %ld\n", g_log.size(), g_log_sum);
    return 0;
}
