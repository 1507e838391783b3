/* verdict: race-free
 * needs: lib, cv
 * expect-exit: 0
 */
// std::condition_variable without the predicate overload: the waiter
// writes the loop itself, "while (!g_flag) g_cv.wait(lk);", around the
// plain wait(unique_lock&). The notifier sets g_flag under the mutex and
// notifies after unlocking. Data written before the notification is read
// after the loop.
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

std::mutex g_mu;
std::condition_variable g_cv;
bool g_flag = false;
long g_message[4];
long g_received;

static void waiter()
{
    std::unique_lock<std::mutex> lk(g_mu);
    while (!g_flag)
        g_cv.wait(lk);
    lk.unlock();
    g_received = g_message[0] + g_message[1] + g_message[2] + g_message[3];
}

static void notifier()
{
    for (int i = 0; i < 4; i++)
        g_message[i] = 100 + i;
    {
        std::lock_guard<std::mutex> guard(g_mu);
        g_flag = true;
    }
    g_cv.notify_one();
}

int main()
{
    std::thread w(waiter);
    std::thread n(notifier);
    n.join();
    w.join();
    std::printf("cxx_cv_manual_loop: %ld\n", g_received);
    return 0;
}
