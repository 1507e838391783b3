/* expect-exit: 0 */
// Class hierarchy with virtual functions and virtual destructors,
// std::unique_ptr ownership, std::function, lambdas (capturing and not),
// templates, std::sort with a lambda comparator and iostream output.
#include <algorithm>
#include <functional>
#include <iomanip>
#include <iostream>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

static int live_objects = 0;

class Animal {
public:
    explicit Animal(std::string name, int weight) : name_(std::move(name)), weight_(weight) { ++live_objects; }
    virtual ~Animal() { --live_objects; }
    virtual std::string sound() const = 0;
    virtual int legs() const { return 4; }
    virtual std::string describe() const {
        return name_ + " says " + sound() + " on " + std::to_string(legs()) + " legs";
    }
    const std::string &name() const { return name_; }
    int weight() const { return weight_; }
private:
    std::string name_;
    int weight_;
};

class Dog : public Animal {
public:
    using Animal::Animal;
    std::string sound() const override { return "woof"; }
};

class Bird : public Animal {
public:
    Bird(std::string n, int w, bool flies) : Animal(std::move(n), w), flies_(flies) {}
    ~Bird() override { ++bird_dtors; }
    std::string sound() const override { return "tweet"; }
    int legs() const override { return 2; }
    std::string describe() const override {
        return Animal::describe() + (flies_ ? " (flies)" : " (walks)");
    }
    static int bird_dtors;
private:
    bool flies_;
};
int Bird::bird_dtors = 0;

class Puppy final : public Dog {
public:
    using Dog::Dog;
    std::string sound() const override { return "yip"; }
};

template <typename T>
T sum_all(const std::vector<T> &v) { return std::accumulate(v.begin(), v.end(), T{}); }

template <typename T, int N>
struct FixedStack {
    T items[N];
    int top = 0;
    bool push(const T &x) { if (top == N) return false; items[top++] = x; return true; }
    T pop() { return items[--top]; }
};

static int apply_twice(const std::function<int(int)> &f, int x) { return f(f(x)); }

int main()
{
    {
        std::vector<std::unique_ptr<Animal>> zoo;
        zoo.push_back(std::make_unique<Dog>("rex", 30));
        zoo.push_back(std::make_unique<Bird>("tweety", 1, true));
        zoo.push_back(std::make_unique<Puppy>("bit", 5));
        zoo.push_back(std::make_unique<Bird>("pingu", 20, false));
        zoo.push_back(std::make_unique<Dog>("ace", 25));
        std::cout << "live objects: " << live_objects << "\n";
        for (const auto &a : zoo)
            std::cout << "  " << a->describe() << "\n";

        std::sort(zoo.begin(), zoo.end(), [](const std::unique_ptr<Animal> &a, const std::unique_ptr<Animal> &b) {
            return a->weight() != b->weight() ? a->weight() < b->weight() : a->name() < b->name();
        });
        std::cout << "by weight:";
        for (const auto &a : zoo)
            std::cout << " " << a->name() << "(" << a->weight() << ")";
        std::cout << "\n";

        int total_legs = 0;
        std::for_each(zoo.begin(), zoo.end(), [&total_legs](const auto &a) { total_legs += a->legs(); });
        std::cout << "total legs: " << total_legs << "\n";
        zoo.erase(zoo.begin() + 1); // destroys one object early
        std::cout << "after erase live: " << live_objects << "\n";
    }
    std::cout << "after scope live: " << live_objects << ", bird dtors: " << Bird::bird_dtors << "\n";

    int base = 7;
    std::function<int(int)> add_base = [base](int x) { return x + base; };
    std::function<int(int)> square = [](int x) { return x * x; };
    std::cout << "apply_twice(add_base, 1) = " << apply_twice(add_base, 1) << "\n";
    std::cout << "apply_twice(square, 3) = " << apply_twice(square, 3) << "\n";
    std::vector<std::function<int(int)>> pipeline{add_base, square, [](int x) { return x - 1; }};
    int v = 2;
    for (auto &f : pipeline)
        v = f(v);
    std::cout << "pipeline(2) = " << v << "\n";

    std::vector<int> ints{5, 3, 9, 1, 7, 2, 8};
    std::vector<double> dbls{1.5, 2.25, 3.125};
    std::sort(ints.begin(), ints.end(), [](int a, int b) { return a > b; });
    std::cout << "desc:";
    for (int i : ints)
        std::cout << ' ' << i;
    std::cout << "\nsum ints=" << sum_all(ints) << " sum dbls=" << std::fixed << std::setprecision(3)
              << sum_all(dbls) << "\n";

    FixedStack<std::string, 3> st;
    for (const char *s : {"one", "two", "three", "four"})
        std::cout << "push " << s << ": " << (st.push(s) ? "ok" : "full") << "\n";
    while (st.top > 0)
        std::cout << "pop " << st.pop() << "\n";
    std::cout << std::hex << "hex 255 = " << 255 << std::dec << ", dec = " << 255 << std::endl;
    return 0;
}
