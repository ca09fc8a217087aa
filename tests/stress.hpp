// A multi-threaded stress run of one data structure under one reclaimer,
// checked against what the threads' own successful updates add up to.
//
// Used by every reclaimer x data structure x free mode test:
//
//     smr::test::stress_options options;
//     options.cfg.free.mode = smr::free_mode::amortized;
//     auto result = smr::test::run_stress<smr::debra_domain, smr::ds::lazylist>(options);
//     EXPECT_TRUE(result.ok()) << result.error;
//
// Each round starts `threads` threads that register with the domain
// (smr::attach), meet at a latch, do their share of random operations
// with a per-thread xorshift generator, and exit; rounds reuse the same
// thread slots (and inherit their limbo bags). Between rounds, with every
// thread joined, validate() must hold and its key sum and size must equal
// the sum of keys successfully inserted minus erased, and their count.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <latch>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "smr/ds/validation.hpp"
#include "smr/reclaim/domain_base.hpp"
#include "smr/reclaim/guards.hpp"
#include "smr/stm/transaction.hpp"

namespace smr::test {

/// 2 x hardware threads, at least 4: always more threads than cores, so
/// preemption inside operations (and inside critical sections) happens.
inline int default_stress_threads() {
    const int hardware = static_cast<int>(std::thread::hardware_concurrency());
    return std::max(4, 2 * hardware);
}

struct stress_options {
    int threads = default_stress_threads();
    /// Keys are uniform in [0, key_range). Small ranges make updates collide
    /// and nodes be retired and freed constantly.
    std::int64_t key_range = 32;
    /// Operations per thread, over all rounds.
    std::uint64_t ops_per_thread = 200000;
    /// The rest of 100 are contains.
    int insert_pct = 50;
    int erase_pct = 50;
    /// Times threads are created, run and joined (thread slots are reused).
    int rounds = 4;
    /// Each round ends for every thread as soon as one thread has done its
    /// share, as a timed benchmark run stops all threads at once (then
    /// `operations` falls short of threads x ops_per_thread). A structure
    /// whose late-round damage a lone straggler would repair is validated
    /// without that straggler.
    bool stop_together = false;
    std::uint64_t seed = 0x2545F4914F6CDD1DULL;
    /// With a pool that can run out (cfg.memory): an operation whose
    /// allocation throws std::bad_alloc gave up, counted in `failed`, and must
    /// have left the set unchanged. Otherwise such a throw fails the run.
    bool allocation_may_fail = false;
    domain_config cfg{};
};

struct stress_result {
    /// Empty when everything held; otherwise the first failure.
    std::string error;
    /// validate() after the last round.
    ds::validation_result validation;
    /// What the threads' successful inserts minus erases add up to.
    std::int64_t expected_key_sum = 0;
    std::int64_t expected_size = 0;
    std::uint64_t operations = 0;
    std::uint64_t inserted = 0;  ///< successful inserts
    std::uint64_t erased = 0;    ///< successful erases
    std::uint64_t found = 0;     ///< successful contains
    std::uint64_t failed = 0;    ///< operations that gave up for lack of memory
    /// Domain counters after the last round (the domain still holds its
    /// unreclaimed garbage, which its destructor frees).
    reclaimer_stats stats;
    /// A transactional structure's commits and aborts (its stm_stats()).
    std::optional<stm::stm_stats> stm;
    double seconds = 0;

    bool ok() const { return error.empty(); }
};

namespace detail {

/// Marsaglia's xorshift64*: a few cycles, no shared state.
class xorshift64 {
  public:
    explicit xorshift64(std::uint64_t seed) : state_(seed != 0 ? seed : 0x9E3779B97F4A7C15ULL) {}
    std::uint64_t next() noexcept {
        state_ ^= state_ >> 12;
        state_ ^= state_ << 25;
        state_ ^= state_ >> 27;
        return state_ * 0x2545F4914F6CDD1DULL;
    }

  private:
    std::uint64_t state_;
};

/// splitmix64: decorrelates the seeds of consecutive threads.
inline std::uint64_t mix_seed(std::uint64_t x) noexcept {
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

struct thread_totals {
    std::uint64_t key_sum = 0;  // wraps, like validate()'s
    std::int64_t size = 0;
    std::uint64_t operations = 0, inserted = 0, erased = 0, found = 0, failed = 0;
};

/// One random operation of the stress mix, counted into `mine`.
template <class Set>
void stress_operation(Set& set, typename Set::context_type& self, std::uint64_t r,
                      const stress_options& options, thread_totals& mine) {
    const auto key =
        static_cast<std::int64_t>((r >> 16) % static_cast<std::uint64_t>(options.key_range));
    const int dice = static_cast<int>((r & 0xFFFF) % 100);
    if (dice < options.insert_pct) {
        if (set.insert(self, key, key)) {
            mine.key_sum += static_cast<std::uint64_t>(key);
            ++mine.size;
            ++mine.inserted;
        }
    } else if (dice < options.insert_pct + options.erase_pct) {
        if (set.erase(self, key)) {
            mine.key_sum -= static_cast<std::uint64_t>(key);
            --mine.size;
            ++mine.erased;
        }
    } else if (set.contains(self, key)) {
        ++mine.found;
    }
}

}  // namespace detail

/// DS is a set template whose first parameter is the domain (the other
/// parameters keep their defaults), e.g. smr::ds::lazylist.
template <class Domain, template <class...> class DS>
stress_result run_stress(const stress_options& options) {
    stress_result result;
    if (options.threads < 1 || options.rounds < 1 || options.key_range < 1 ||
        options.insert_pct < 0 || options.erase_pct < 0 ||
        options.insert_pct + options.erase_pct > 100) {
        result.error = "run_stress: invalid options";
        return result;
    }
    Domain domain(options.cfg);
    DS<Domain> set(domain);

    std::uint64_t key_sum = 0;
    std::int64_t size = 0;
    std::mutex error_mutex;
    const auto start = std::chrono::steady_clock::now();

    for (int round = 0; round < options.rounds && result.ok(); ++round) {
        // This round's share; the first rounds take the remainder.
        const std::uint64_t ops =
            options.ops_per_thread / options.rounds +
            (static_cast<std::uint64_t>(round) < options.ops_per_thread % options.rounds ? 1 : 0);
        std::vector<detail::thread_totals> totals(options.threads);
        std::atomic<bool> round_over{false};  // stop_together only
        std::latch ready(options.threads);
        std::atomic<int> running{options.threads};  // the main thread samples until 0
        std::vector<std::thread> threads;
        threads.reserve(options.threads);
        for (int t = 0; t < options.threads; ++t) {
            threads.emplace_back([&, t] {
                bool arrived = false;
                try {
                    auto self = smr::attach(domain);
                    detail::xorshift64 rng(
                        detail::mix_seed(options.seed ^ (static_cast<std::uint64_t>(round) << 32) ^
                                         static_cast<std::uint64_t>(t)));
                    ready.arrive_and_wait();
                    arrived = true;
                    detail::thread_totals& mine = totals[t];
                    for (std::uint64_t i = 0; i < ops; ++i) {
                        // relaxed: only ends the loop; the join publishes the totals.
                        if (options.stop_together && round_over.load(std::memory_order_relaxed)) {
                            break;
                        }
                        try {
                            detail::stress_operation(set, self, rng.next(), options, mine);
                        } catch (const std::bad_alloc&) {
                            if (!options.allocation_may_fail) throw;
                            ++mine.failed;
                        }
                        ++mine.operations;
                        // An application quiescent state between operations, as
                        // smrbench's workers do (QSBR frees nothing without it).
                        domain.quiescent(self);
                    }
                    if (options.stop_together) round_over.store(true, std::memory_order_relaxed);
                    // A transactional structure hands its thread's pending
                    // frees to the domain before the thread detaches.
                    if constexpr (requires { DS<Domain>::transactional; }) set.flush(self);
                } catch (const std::exception& e) {
                    if (!arrived) ready.count_down();
                    std::lock_guard lock(error_mutex);
                    if (result.error.empty()) result.error = std::string("thread: ") + e.what();
                }
                running.fetch_sub(1, std::memory_order_relaxed);  // only ends the sampling
            });
        }
        // Peak garbage is what samples see (schemes do not sample): the main
        // thread samples while the workers run, as smrbench's sampler does.
        while (running.load(std::memory_order_relaxed) != 0) {
            domain.sample_garbage();
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
        for (std::thread& thread : threads) thread.join();

        for (const detail::thread_totals& mine : totals) {
            key_sum += mine.key_sum;
            size += mine.size;
            result.operations += mine.operations;
            result.inserted += mine.inserted;
            result.erased += mine.erased;
            result.found += mine.found;
            result.failed += mine.failed;
        }
        result.expected_key_sum = static_cast<std::int64_t>(key_sum);
        result.expected_size = size;
        result.validation = set.validate();
        const std::string when = " after round " + std::to_string(round + 1);
        if (!result.ok()) {
            break;
        } else if (!result.validation.ok) {
            result.error = "validate() failed" + when + ": " + result.validation.error;
        } else if (result.validation.key_sum != result.expected_key_sum) {
            result.error = "key sum " + std::to_string(result.validation.key_sum) +
                           " != " + std::to_string(result.expected_key_sum) + " expected" + when;
        } else if (static_cast<std::int64_t>(result.validation.size) != result.expected_size) {
            result.error = "size " + std::to_string(result.validation.size) +
                           " != " + std::to_string(result.expected_size) + " expected" + when;
        }
    }
    result.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    result.stats = domain.stats();
    if constexpr (requires { set.stm_stats(); }) result.stm = set.stm_stats();
    return result;
}

}  // namespace smr::test
