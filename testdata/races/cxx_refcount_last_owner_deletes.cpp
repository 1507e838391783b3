/* verdict: race-free
 * needs: lib
 * expect-exit: 0
 */
// An intrusively reference-counted object shared by worker threads, as
// COM-style or Qt-style code does it: each worker reads the object and
// drops its reference with an atomic decrement; whichever worker drops the
// last one deletes it, running the virtual destructors (whose vptr stores
// write the object). The acq_rel decrement orders every other owner's
// reads before the delete.
#include <atomic>
#include <cstdio>
#include <thread>
#include <vector>

struct Shared {
    std::atomic<int> refs{1};
    virtual ~Shared() = default;
    virtual long value() const = 0;
    void retain() { refs.fetch_add(1, std::memory_order_relaxed); }
    void release()
    {
        if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1)
            delete this;
    }
};

struct Table : Shared {
    long cells[32];
    Table()
    {
        for (int i = 0; i < 32; i++)
            cells[i] = i * 3;
    }
    ~Table() override { cells[0] = -1; }
    long value() const override
    {
        long s = 0;
        for (long c : cells)
            s += c;
        return s;
    }
};

static std::atomic<long> g_total{0};

int main()
{
    std::vector<std::thread> workers;
    for (int round = 0; round < 20; round++) {
        Shared *obj = new Table;
        for (int w = 0; w < 3; w++) {
            obj->retain();
            workers.emplace_back([obj] {
                g_total += obj->value();
                obj->release();
            });
        }
        obj->release();
    }
    for (auto &t : workers)
        t.join();
    std::printf("cxx_refcount_last_owner_deletes: %ld\n", g_total.load());
    return 0;
}
