/* verdict: race-free
 * needs: lib, cv
 * expect-exit: 0
 */
// std::condition_variable used with the predicate overload
// cv.wait(lock, pred): the waiting loop is instantiated inline in the
// executable and calls std::condition_variable::wait (libstdc++, which
// calls pthread_cond_wait). Three waiters; the signaller may notify before
// some of them wait (lost notifications).
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>

std::mutex g_mu;
std::condition_variable g_cv;
bool g_go = false;
int g_setting[3];
int g_copies[3];

static void waiter(int id)
{
    {
        std::unique_lock<std::mutex> lk(g_mu);
        g_cv.wait(lk, [] { return g_go; });
    }
    g_copies[id] = g_setting[id] + 1;
}

int main()
{
    std::vector<std::thread> ws;
    for (int i = 0; i < 3; i++)
        ws.emplace_back(waiter, i);
    for (int i = 0; i < 3; i++)
        g_setting[i] = 10 * (i + 1);
    {
        std::lock_guard<std::mutex> guard(g_mu);
        g_go = true;
    }
    g_cv.notify_all();
    for (auto &t : ws)
        t.join();
    std::printf("cxx_cv_predicate: %d %d %d\n", g_copies[0], g_copies[1], g_copies[2]);
    return 0;
}
