/* verdict: race-free
 * needs: lib
 * expect-exit: 0
 */
// Inside a std::lock_guard scope the worker appends to a shared list and,
// every third time, throws; the exception propagates out of the guarded
// scope (unwinding unlocks the mutex) and is caught in the same thread.
// All accesses to g_events happen with g_events_mu held.
#include <cstdio>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

std::mutex g_events_mu;
std::vector<int> g_events;
long g_caught[2];

static void record(int v)
{
    std::lock_guard<std::mutex> guard(g_events_mu);
    g_events.push_back(v);
    if (v % 3 == 0)
        throw std::runtime_error("multiple of three");
}

static void worker(int slot)
{
    long caught = 0;
    for (int i = 0; i < 300; i++) {
        try {
            record(i);
        } catch (const std::runtime_error &) {
            caught++;
        }
    }
    g_caught[slot] = caught;
}

int main()
{
    std::thread a(worker, 0);
    std::thread b(worker, 1);
    a.join();
    b.join();
    std::printf("cxx_exception_lock_guard: %zu events, caught %ld %ld\n", g_events.size(),
                g_caught[0], g_caught[1]);
    return 0;
}
