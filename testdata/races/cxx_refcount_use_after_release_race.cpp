/* verdict: race
 * racy: heap:make_session
 * needs: lib, spin
 * expect-exit: 0
 */
// A reference-counting bug: a worker drops its reference and only then
// reads the session's counter for its log line. The main thread, which
// holds the other reference, sees the count drop to its own and recycles
// the session for the next client, resetting the counter; the worker's
// late read and the reset are unordered (the decrement orders only what
// the worker did before it). The main thread waits for the worker's read
// to finish before it frees the memory (a second atomic), so the program
// is safe to run; the race is the read against the reset.
#include <atomic>
#include <cstdio>
#include <thread>

struct Session {
    std::atomic<int> refs{2};
    long requests = 0;
};

static std::atomic<int> g_worker_done{0};
static long g_logged;

__attribute__((noinline)) static Session *make_session()
{
    return new Session;
}

int main()
{
    Session *s = make_session();
    s->requests = 7;
    std::thread worker([s] {
        s->refs.fetch_sub(1, std::memory_order_acq_rel);
        g_logged = s->requests; // too late: the reference is gone
        g_worker_done.store(1, std::memory_order_release);
    });
    while (s->refs.load(std::memory_order_acquire) != 1)
        std::this_thread::yield();
    s->requests = 0; // sole owner now, it thinks: recycle for the next client
    while (!g_worker_done.load(std::memory_order_acquire))
        std::this_thread::yield();
    delete s;
    worker.join();
    std::printf("cxx_refcount_use_after_release_race: %d\n", g_logged == 7 || g_logged == 0);
    return 0;
}
