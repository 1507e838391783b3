/* verdict: race-free
 * needs: lib
 * expect-exit: 0
 */
/* Thread-safe initialisation of a function-local static (C++11 "magic
 * statics"): both threads call registry(); the first one constructs the
 * object under __cxa_guard_acquire/__cxa_guard_release, the other either
 * waits in __cxa_guard_acquire or sees the guard byte already set (an
 * inline acquire load, a plain mov on x86) and uses the object. Every use
 * happens after the construction. */
#include <pthread.h>
#include <cstdio>
#include <string>
#include <vector>

struct Registry {
    std::vector<int> values;
    std::string name;
    Registry() : values{1, 2, 3, 4}, name("registry") {}
};

__attribute__((noinline)) static Registry &registry()
{
    static Registry r;
    return r;
}

static long sums[2];

static void *user(void *arg)
{
    long id = (long)arg;
    long s = 0;
    for (int v : registry().values)
        s += v;
    sums[id] = s + (long)registry().name.size();
    return nullptr;
}

int main()
{
    pthread_t t[2];
    for (long i = 0; i < 2; i++)
        pthread_create(&t[i], nullptr, user, (void *)i);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], nullptr);
    std::printf("cxx_static_local_init: %ld %ld\n", sums[0], sums[1]);
    return 0;
}
