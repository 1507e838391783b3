// std::condition_variable waits: each loop is in its own function so tests
// can assert per function. Built by loops_test.go at -O0 and -O2.
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

std::mutex m;
std::condition_variable cv;
std::condition_variable_any cva;
bool ready;
int counter;

__attribute__((noinline)) void cxx_wait_loop() {
    std::unique_lock<std::mutex> lk(m);
    while (!ready)
        cv.wait(lk);
}

__attribute__((noinline)) void cxx_wait_pred() {
    std::unique_lock<std::mutex> lk(m);
    cv.wait(lk, [] { return ready; });
}

__attribute__((noinline)) bool cxx_wait_for() {
    std::unique_lock<std::mutex> lk(m);
    return cv.wait_for(lk, std::chrono::milliseconds(100), [] { return ready; });
}

__attribute__((noinline)) bool cxx_wait_until() {
    std::unique_lock<std::mutex> lk(m);
    auto t = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
    while (!ready)
        if (cv.wait_until(lk, t) == std::cv_status::timeout)
            return ready;
    return true;
}

__attribute__((noinline)) void cxx_wait_any() {
    std::unique_lock<std::mutex> lk(m);
    cva.wait(lk, [] { return ready; });
}

__attribute__((noinline)) void cxx_wait_any_for() {
    std::unique_lock<std::mutex> lk(m);
    cva.wait_for(lk, std::chrono::milliseconds(100), [] { return ready; });
}

int main() {
    std::thread t([] {
        {
            std::lock_guard<std::mutex> g(m);
            ready = true;
        }
        cv.notify_all();
        cva.notify_all();
    });
    cxx_wait_loop();
    cxx_wait_pred();
    cxx_wait_for();
    cxx_wait_until();
    cxx_wait_any();
    cxx_wait_any_for();
    t.join();
    return 0;
}
