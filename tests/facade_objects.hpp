// The object the facade tests retire (test_hazard_pointer.cpp,
// test_rcu_facade.cpp): it knows whether it is alive, since its destructor
// breaks its seal (a reader that sees a broken seal read a destroyed object)
// and it counts how many were made and destroyed. And the rounds of threads
// their stress tests run.
#pragma once

#include <atomic>
#include <barrier>
#include <cstdint>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "smr/core/check.hpp"

namespace smr::test {

inline std::atomic<std::int64_t> made{0};
inline std::atomic<std::int64_t> destroyed{0};

/// Base is the facade's base class template (hazard_pointer_obj_base,
/// rcu_obj_base), given the object's type and the default deleter.
template <template <class, class> class Base>
struct tracked : Base<tracked<Base>, std::default_delete<tracked<Base>>> {
    static constexpr std::uint64_t intact = 0x5EA1'5EA1'5EA1'5EA1ull;
    explicit tracked(std::uint64_t v) noexcept : value(v) { made.fetch_add(1); }
    ~tracked() {
        SMR_CHECK(seal == intact, "tracked destroyed twice");
        *static_cast<volatile std::uint64_t*>(&seal) = 0;  // kept by the optimizer
        destroyed.fetch_add(1);
    }
    std::uint64_t value;
    std::uint64_t seal = intact;
    std::uint64_t twin = value;  // value again: a torn or reused object differs
};

template <template <class, class> class Base>
bool intact(const tracked<Base>* t) {
    return t->seal == tracked<Base>::intact && t->twin == t->value;
}

/// Runs `rounds` rounds in which `threads` new threads start together and
/// each runs body(thread index, its random generator): threads come and go
/// between rounds, so slots and registrations are reused.
template <class Body>
void in_rounds(int threads, int rounds, Body body) {
    for (int round = 0; round < rounds; ++round) {
        std::barrier start(threads);
        std::vector<std::thread> workers;
        for (int t = 0; t < threads; ++t) {
            workers.emplace_back([&, t] {
                std::minstd_rand rng(static_cast<unsigned>(round * 100 + t + 1));
                start.arrive_and_wait();
                body(t, rng);
            });
        }
        for (auto& w : workers) w.join();
    }
}

}  // namespace smr::test
