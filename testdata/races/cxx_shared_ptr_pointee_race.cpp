/* verdict: race
 * racy: heap:make_tally
 * needs: lib
 * expect-exit: 0
 */
// Each thread gets its own std::shared_ptr<Tally> copy and increments
// tally->count through it without a lock, so the writes to the heap object
// allocated in make_tally race in every run. The reference count itself is
// atomic and not racy, but every copy and destruction of a shared_ptr is
// an acq_rel read-modify-write of it, which orders whatever precedes it in
// one thread before whatever follows the next RMW in another. So both
// copies are made before the first thread starts and moved into the
// threads (a move does not touch the count), and the threads do not copy
// inside the loop: the only RMW after a thread's writes is its final
// decrement, and no thread's writes follow an RMW of the other thread.
// (Copying per iteration, or copying for the second thread after starting
// the first, would order the threads in some runs: no race in those runs.)
#include <cstdio>
#include <memory>
#include <thread>

struct Tally { long count = 0; };

__attribute__((noinline)) static std::shared_ptr<Tally> make_tally()
{
    return std::shared_ptr<Tally>(new Tally());
}

static void bump(std::shared_ptr<Tally> tally)
{
    for (int i = 0; i < 500; i++)
        tally->count++;         // BUG: unsynchronised write to the pointee
}

int main()
{
    std::shared_ptr<Tally> tally = make_tally();
    std::shared_ptr<Tally> for_a = tally, for_b = tally;
    std::thread a(bump, std::move(for_a));
    std::thread b(bump, std::move(for_b));
    a.join();
    b.join();
    std::puts("cxx_shared_ptr_pointee_race: done");
    return 0;
}
