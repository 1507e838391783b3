/* verdict: race
 * racy: g_last_status
 * needs: lib
 * expect-exit: 0
 */
// A worker fulfils a promise and then, a bug, records its status in a
// global; the main thread reads the status right after get(). The promise
// orders only what the worker did before set_value(), so the status write
// and main's read are unordered in every run. The worker then waits for
// main's acknowledgement so that the program stays deterministic.
#include <cstdio>
#include <future>
#include <thread>

int g_last_status;

int main()
{
    std::promise<int> answer;
    std::promise<void> ack;
    std::future<int> answer_future = answer.get_future();
    std::future<void> ack_future = ack.get_future();
    std::thread worker([&] {
        answer.set_value(42);
        g_last_status = 1;
        ack_future.get();
    });
    int v = answer_future.get();
    int status = g_last_status;
    ack.set_value();
    worker.join();
    std::printf("cxx_future_late_write_race: %d\n", v + (status >= 0));
    return 0;
}
