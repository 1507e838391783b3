/* verdict: race-free
 * needs: lib, spin
 * expect-exit: 0
 */
// std::atomic<bool> publishes a non-atomic array: the writer fills
// g_results and stores true (sequentially consistent: "xchg"); the reader
// spins on load() (a plain "mov") with std::this_thread::yield() and then
// reads the array. Correct C++; in the binary the reading side is a
// spinning read loop on a plain load.
#include <atomic>
#include <cstdio>
#include <thread>

std::atomic<bool> g_ready{false};
int g_results[8];
long g_reader_sum;

static void writer()
{
    for (int i = 0; i < 8; i++)
        g_results[i] = i * i;
    g_ready.store(true);
}

static void reader()
{
    while (!g_ready.load())
        std::this_thread::yield();
    long sum = 0;
    for (int i = 0; i < 8; i++)
        sum += g_results[i];
    g_reader_sum = sum;
}

int main()
{
    std::thread r(reader);
    std::thread w(writer);
    w.join();
    r.join();
    std::printf("cxx_atomic_bool_flag: %ld\n", g_reader_sum);
    return 0;
}
