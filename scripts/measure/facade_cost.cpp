// One-thread cost of the C++26 facades (smr/hazard_pointer.hpp, smr/rcu.hpp), in the shape
// of folly's hazptr microbenchmarks (folly/synchronization/test/HazptrTest.cpp:
// ten holder constructions and destructions; a traversal of a 20-item list
// protecting every item), so the numbers can be read beside theirs.
//
//   g++ -std=c++20 -O2 -DNDEBUG -Iinclude -pthread -o /tmp/facade_cost
//       scripts/measure/facade_cost.cpp                  (one command)
//   /tmp/facade_cost                    # ns per operation: median and range of 7 rounds
//
// Deterministic instruction counts: each benchmark runs in a function of its
// own, so callgrind can count just that function:
//
//   valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.out
//       --toggle-collect='*run_protect_reset*' /tmp/facade_cost protect_reset 100000
//                                                        (one command)
//   callgrind_annotate /tmp/cg.out | head   # total Ir / 100000 = instructions per op
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

#include "smr/hazard_pointer.hpp"
#include "smr/rcu.hpp"

namespace {

struct item : smr::hazard_pointer_obj_base<item> {
    explicit item(item* n) noexcept : next(n) {}
    std::atomic<item*> next;
    int value = 1;
};

/// Keeps a value alive for the optimizer without a store.
template <class T>
void keep(T const& value) {
    asm volatile("" : : "r,m"(value) : "memory");
}

/// Ten hazard pointers made and destroyed (folly: "10x construct/destruct
/// hazptr_holder").
[[gnu::noinline]] void run_make_destroy_x10(std::size_t iterations) {
    for (std::size_t i = 0; i < iterations; ++i) {
        for (int k = 0; k < 10; ++k) {
            smr::hazard_pointer h = smr::make_hazard_pointer();
            keep(h);
        }
    }
}

std::atomic<item*> single{new item(nullptr)};

/// protect + reset_protection of one pointer with a hazard pointer held
/// throughout (the facade's cost per protected read).
[[gnu::noinline]] void run_protect_reset(std::size_t iterations) {
    smr::hazard_pointer h = smr::make_hazard_pointer();
    for (std::size_t i = 0; i < iterations; ++i) {
        keep(h.protect(single)->value);
        h.reset_protection();
    }
}

std::atomic<item*> list_head{nullptr};

/// A 20-item list traversed hand over hand, every item protected (folly:
/// "List protect all 20"): two hazard pointers made per traversal.
[[gnu::noinline]] void run_protect_all_20(std::size_t iterations) {
    for (std::size_t i = 0; i < iterations; ++i) {
        smr::hazard_pointer current = smr::make_hazard_pointer();
        smr::hazard_pointer next = smr::make_hazard_pointer();
        int sum = 0;
        for (item* p = current.protect(list_head); p != nullptr;) {
            sum += p->value;
            item* n = next.protect(p->next);
            current.swap(next);  // current protects n; p needs no protection now
            p = n;
        }
        keep(sum);
    }
}

std::atomic<item*> rcu_protected{new item(nullptr)};

/// One read-side section with one read inside (rcu_domain: debra).
[[gnu::noinline]] void run_rcu_section(std::size_t iterations) {
    smr::rcu_domain& domain = smr::rcu_default_domain();
    for (std::size_t i = 0; i < iterations; ++i) {
        std::scoped_lock section(domain);
        keep(rcu_protected.load(std::memory_order_acquire)->value);
    }
}

struct rcu_item : smr::rcu_obj_base<rcu_item> {
    int value = 1;
};

/// new + retire of an object, with the batch reclamation it triggers (one
/// grace period and 1024 deletes per 1024 retires) amortized over them.
[[gnu::noinline]] void run_rcu_new_retire(std::size_t iterations) {
    for (std::size_t i = 0; i < iterations; ++i) (new rcu_item)->retire();
}

struct benchmark {
    const char* name;
    void (*run)(std::size_t);
    std::size_t iterations;  // per round, for the timed mode
};

const benchmark benchmarks[] = {
    {"make_destroy_x10", run_make_destroy_x10, 2'000'000},
    {"protect_reset", run_protect_reset, 20'000'000},
    {"protect_all_20", run_protect_all_20, 1'000'000},
    {"rcu_section", run_rcu_section, 20'000'000},
    {"rcu_new_retire", run_rcu_new_retire, 2'000'000},
};

void timed(const benchmark& b) {
    std::vector<double> ns;
    for (int round = 0; round < 7; ++round) {
        const auto start = std::chrono::steady_clock::now();
        b.run(b.iterations);
        const std::chrono::duration<double, std::nano> took =
            std::chrono::steady_clock::now() - start;
        ns.push_back(took.count() / static_cast<double>(b.iterations));
    }
    std::sort(ns.begin(), ns.end());
    std::printf("%-18s %8.2f ns/op  (min %.2f, max %.2f, 7 rounds)\n", b.name, ns[3], ns.front(),
                ns.back());
}

}  // namespace

int main(int argc, char** argv) {
    for (int i = 0; i < 20; ++i) list_head.store(new item(list_head.load()));
    if (argc == 3) {  // one benchmark, a given number of iterations (for callgrind)
        for (const benchmark& b : benchmarks) {
            if (std::string_view(argv[1]) == b.name) {
                b.run(std::strtoull(argv[2], nullptr, 10));
                return 0;
            }
        }
        std::fprintf(stderr, "facade_cost: unknown benchmark '%s'\n", argv[1]);
        return 2;
    }
    for (const benchmark& b : benchmarks) timed(b);
}
