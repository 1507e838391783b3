/* expect-exit: 3 */
// Exceptions thrown and caught across several call levels: rethrow,
// std::runtime_error, custom exception hierarchy with virtual destructor,
// RAII destructors running during unwinding, try/catch inside a loop.
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

static int destructor_runs = 0;

class MyError {
public:
    MyError(int code, std::string msg) : code_(code), msg_(std::move(msg)) {}
    virtual ~MyError() { destructor_runs++; }
    virtual const char *kind() const { return "MyError"; }
    int code() const { return code_; }
    const std::string &msg() const { return msg_; }
private:
    int code_;
    std::string msg_;
};

class DerivedError : public MyError {
public:
    DerivedError(int code, std::string msg) : MyError(code, std::move(msg)) {}
    ~DerivedError() override { destructor_runs++; }
    const char *kind() const override { return "DerivedError"; }
};

struct Guard {
    const char *name;
    explicit Guard(const char *n) : name(n) {}
    ~Guard() noexcept {
        // destructor-safe: never throws, swallow anything internal
        try {
            if (name[0] == 'x')
                throw std::logic_error("inside destructor");
        } catch (const std::exception &e) {
            std::printf("  guard %s swallowed: %s\n", name, e.what());
        }
        std::printf("  ~Guard(%s)\n", name);
    }
};

__attribute__((noinline)) static int level3(int v)
{
    Guard g("level3");
    if (v == 1) throw std::runtime_error("runtime error at level3");
    if (v == 2) throw DerivedError(42, "derived at level3");
    if (v == 3) throw MyError(7, "base at level3");
    if (v == 4) throw 123;
    return v * 10;
}

__attribute__((noinline)) static int level2(int v)
{
    Guard g("xlevel2");
    std::vector<int> tmp(16, v);
    return level3(v) + tmp[3];
}

__attribute__((noinline)) static int level1(int v)
{
    try {
        return level2(v);
    } catch (const MyError &e) {
        std::printf("  level1 saw %s(%d), rethrowing\n", e.kind(), e.code());
        throw;
    }
}

int main()
{
    int caught = 0;
    for (int v = 0; v <= 5; v++) {
        std::printf("iteration %d\n", v);
        try {
            int r = level1(v);
            std::printf("  returned %d\n", r);
        } catch (const DerivedError &e) {
            std::printf("  caught DerivedError code=%d msg=%s\n", e.code(), e.msg().c_str());
            caught++;
        } catch (const MyError &e) {
            std::printf("  caught %s code=%d msg=%s\n", e.kind(), e.code(), e.msg().c_str());
            caught++;
        } catch (const std::exception &e) {
            std::printf("  caught std::exception: %s\n", e.what());
            caught++;
        } catch (int i) {
            std::printf("  caught int %d\n", i);
            caught++;
        }
    }

    // nested try with translation of exception type
    try {
        try {
            throw std::out_of_range("index 99");
        } catch (const std::out_of_range &e) {
            throw std::runtime_error(std::string("translated: ") + e.what());
        }
    } catch (const std::runtime_error &e) {
        std::printf("nested: %s\n", e.what());
        caught++;
    }

    // std::vector::at throwing from library code
    std::vector<int> v{1, 2, 3};
    try {
        std::printf("at(5)=%d\n", v.at(5));
    } catch (const std::out_of_range &) {
        std::printf("vector::at threw out_of_range\n");
        caught++;
    }

    std::printf("total caught: %d\n", caught);
    std::printf("exception destructor runs: %d\n", destructor_runs);
    return caught == 6 ? 3 : 1;
}
