/* verdict: race-free
 * needs: lib
 * expect-exit: 0
 */
// In-process publish/subscribe.  A message is published once and shared by
// all subscribers: it carries an intrusive atomic reference count, each
// subscriber drops its reference when done, and the last one deletes it.
// Mailboxes are tiny (capacity 1) so a slow subscriber applies back-pressure.
#include <semaphore.h>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

struct Message {
  std::atomic<int> refs{0};
  uint64_t seq = 0;
  std::string topic;
  std::vector<int32_t> body;
  int fanout = 0;  // number of mailboxes the message was delivered to
};

static void release(Message *m) {
  if (m->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete m;
}

// Bounded mailbox in the classic POSIX style: a counting semaphore for free
// slots, one for queued messages, and a mutex for the deque itself.
class Mailbox {
 public:
  explicit Mailbox(unsigned cap) {
    sem_init(&space_, 0, cap);
    sem_init(&items_, 0, 0);
  }
  ~Mailbox() {
    sem_destroy(&space_);
    sem_destroy(&items_);
  }
  void push(Message *m) {  // nullptr means end of stream
    while (sem_wait(&space_) != 0) {
    }
    {
      std::lock_guard<std::mutex> lk(mu_);
      q_.push_back(m);
    }
    sem_post(&items_);
  }
  Message *pop() {
    while (sem_wait(&items_) != 0) {
    }
    Message *m;
    {
      std::lock_guard<std::mutex> lk(mu_);
      m = q_.front();
      q_.pop_front();
    }
    sem_post(&space_);
    return m;
  }
  void close() { push(nullptr); }

 private:
  sem_t space_, items_;
  std::mutex mu_;
  std::deque<Message *> q_;
};

struct SubscriberStats {
  uint64_t messages = 0;
  uint64_t checksum = 0;
  uint64_t fanout_sum = 0;
};

static void subscriber(Mailbox *box, SubscriberStats *st, int which) {
  while (Message *m = box->pop()) {
    uint64_t h = m->seq * 0x9e3779b97f4a7c15ull + (uint64_t)which;
    for (char ch : m->topic) h = (h ^ (uint8_t)ch) * 1099511628211ull;
    for (int32_t v : m->body) h += (uint64_t)(int64_t)v * 31u;
    st->messages++;
    st->checksum ^= h;
    st->fanout_sum += (uint64_t)m->fanout;
    release(m);
  }
}

int main() {
  const int kSubs = 3, kMessages = 4000;
  std::vector<Mailbox *> boxes;
  std::vector<SubscriberStats> stats(kSubs);
  std::vector<std::thread> subs;
  for (int i = 0; i < kSubs; ++i) boxes.push_back(new Mailbox(1));
  for (int i = 0; i < kSubs; ++i)
    subs.emplace_back(subscriber, boxes[i], &stats[i], i);

  const char *topics[] = {"orders/new", "orders/cancel", "prices/tick", "audit"};
  for (int i = 0; i < kMessages; ++i) {
    Message *m = new Message;
    m->seq = (uint64_t)i;
    m->topic = topics[i % 4];
    m->body.resize(8 + i % 24);
    for (size_t j = 0; j < m->body.size(); ++j) m->body[j] = (int32_t)(i * 7 + j);
    m->refs.store(kSubs + 1, std::memory_order_relaxed);  // +1: ours
    m->fanout = kSubs;
    for (Mailbox *b : boxes) b->push(m);
    release(m);
  }
  for (Mailbox *b : boxes) b->close();
  for (auto &t : subs) t.join();
  for (int i = 0; i < kSubs; ++i)
    std::printf("subscriber %d: messages=%llu checksum=%016llx fanout_ok=%s\n", i,
                (unsigned long long)stats[i].messages,
                (unsigned long long)stats[i].checksum,
                stats[i].fanout_sum <= (uint64_t)kSubs * stats[i].messages ? "yes" : "no");
  for (Mailbox *b : boxes) delete b;
  return 0;
}
