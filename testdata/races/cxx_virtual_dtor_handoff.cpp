/* verdict: race-free
 * needs: lib, cv
 * expect-exit: 0
 */
// The producer creates objects of a derived class with new and hands them
// through a mutex/condition-variable protected std::deque<Shape*>; the
// consumer calls a virtual function and deletes each object through the
// base pointer. The virtual destructor writes the object's fields (and
// reads the vtable pointer written by the constructor in the producer);
// all of it is ordered by the queue hand-off.
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <mutex>
#include <thread>

struct Shape {
    virtual ~Shape() { alive = false; }
    virtual long area() const = 0;
    bool alive = true;
};

struct Rect : Shape {
    Rect(long w, long h) : w(w), h(h) {}
    ~Rect() override { w = h = 0; }
    long area() const override { return w * h; }
    long w, h;
};

std::mutex g_q_mu;
std::condition_variable g_q_cv;
std::deque<Shape *> g_queue;
bool g_q_done = false;
long g_area_sum;

static void producer()
{
    for (long i = 1; i <= 50; i++) {
        Shape *s = new Rect(i, 2);
        std::lock_guard<std::mutex> guard(g_q_mu);
        g_queue.push_back(s);
        g_q_cv.notify_one();
    }
    std::lock_guard<std::mutex> guard(g_q_mu);
    g_q_done = true;
    g_q_cv.notify_one();
}

static void consumer()
{
    for (;;) {
        Shape *s = nullptr;
        {
            std::unique_lock<std::mutex> lk(g_q_mu);
            g_q_cv.wait(lk, [] { return !g_queue.empty() || g_q_done; });
            if (g_queue.empty())
                return;
            s = g_queue.front();
            g_queue.pop_front();
        }
        g_area_sum += s->area();
        delete s;               // virtual destructor
    }
}

int main()
{
    std::thread c(consumer);
    std::thread p(producer);
    p.join();
    c.join();
    std::printf("cxx_virtual_dtor_handoff: %ld\n", g_area_sum);
    return 0;
}
