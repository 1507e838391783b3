/* expect-exit: 0 */
// C++17 threading: std::thread, std::mutex, std::lock_guard,
// std::condition_variable with predicate wait, std::atomic<int>,
// std::shared_ptr handed between threads, plus vector/map/string work.
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

struct Shared {
    std::vector<int> data;
    std::string tag;
};

static std::mutex mtx;
static std::condition_variable cv;
static std::shared_ptr<Shared> mailbox;
static bool ready = false;
static std::atomic<int> atomic_counter{0};
static std::map<std::string, long> word_totals;

static void counter_worker(int id, long &out)
{
    long local = 0;
    for (int i = 0; i < 50000; i++) {
        atomic_counter.fetch_add(1, std::memory_order_relaxed);
        local += (i * (id + 1)) % 13;
    }
    std::string key = "w" + std::to_string(id % 2);
    {
        std::lock_guard<std::mutex> g(mtx);
        word_totals[key] += local;
        word_totals["all"] += local;
    }
    out = local;
}

static void consumer(long &result, std::string &tag_out, long &use_count_seen)
{
    std::shared_ptr<Shared> p;
    {
        std::unique_lock<std::mutex> lk(mtx);
        cv.wait(lk, [] { return ready; });
        p = mailbox;
    }
    long s = 0;
    for (int v : p->data)
        s += v;
    result = s;
    tag_out = p->tag + "/consumed";
    use_count_seen = p.use_count() >= 1 ? 1 : 0;
}

int main()
{
    // phase 1: counters
    std::vector<std::thread> ts;
    std::vector<long> outs(4, 0);
    for (int i = 0; i < 4; i++)
        ts.emplace_back(counter_worker, i, std::ref(outs[i]));
    for (auto &t : ts)
        t.join();
    std::printf("atomic counter: %d\n", atomic_counter.load());
    for (int i = 0; i < 4; i++)
        std::printf("worker %d local: %ld\n", i, outs[i]);
    for (const auto &kv : word_totals)
        std::printf("map[%s] = %ld\n", kv.first.c_str(), kv.second);

    // phase 2: shared_ptr handoff with condition_variable
    long result = 0, seen = 0;
    std::string tag;
    std::thread c(consumer, std::ref(result), std::ref(tag), std::ref(seen));
    auto sp = std::make_shared<Shared>();
    for (int i = 1; i <= 1000; i++)
        sp->data.push_back(i * i % 1009);
    sp->tag = "payload";
    {
        std::lock_guard<std::mutex> g(mtx);
        mailbox = sp;
        ready = true;
    }
    cv.notify_one();
    c.join();
    std::printf("consumer sum: %ld\n", result);
    std::printf("consumer tag: %s\n", tag.c_str());
    std::printf("consumer saw live pointer: %ld\n", seen);
    mailbox.reset();
    std::printf("use_count after join/reset: %ld\n", sp.use_count());

    // phase 3: parallel string building, merged deterministically
    std::vector<std::string> parts(3);
    std::vector<std::thread> sb;
    for (int i = 0; i < 3; i++)
        sb.emplace_back([i, &parts] {
            std::string s;
            for (int k = 0; k < 5; k++)
                s += static_cast<char>('a' + i * 5 + k);
            parts[i] = s;
        });
    for (auto &t : sb)
        t.join();
    std::string joined;
    for (auto &p : parts)
        joined += p + "-";
    std::printf("joined: %s (len %zu)\n", joined.c_str(), joined.size());
    return 0;
}
