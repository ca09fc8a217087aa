// Drives a data structure with concurrent threads, records every operation
// and checks the history: run_set for the sets, run_queue for the queue.
//
// The runs are short and conflict on purpose: a few threads (more than
// cores, so operations are preempted midway), a few thousand operations, a
// key range of 2-8 so that every operation races with others on its key. The
// domain frees in small batches, so nodes are reused while threads run
// (under AddressSanitizer a use-after-free fails the run on its own).
//
//     smr::lincheck::run_options options;
//     auto result = smr::lincheck::run_set<smr::debra_domain, smr::ds::lazylist>(options);
//     EXPECT_TRUE(result.ok()) << result.text();
#pragma once

#include <chrono>
#include <cstdint>
#include <exception>
#include <latch>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "../stress.hpp"
#include "check.hpp"
#include "recorder.hpp"
#include "smr/reclaim/guards.hpp"

namespace smr::lincheck {

struct run_options {
    int threads = 4;
    std::uint64_t ops_per_thread = 1'000;
    /// Keys uniform in [0, key_range); the even ones are inserted first.
    std::int64_t key_range = 4;
    /// Sets: insert and erase shares (the rest contains). Queue: enqueue
    /// share (the rest dequeue).
    int insert_pct = 35;
    int erase_pct = 35;
    std::uint64_t seed = 1;
    smr::domain_config cfg = small_bags();
    /// The search's budget per history (per key segment, for a set): beyond
    /// it the check gives up (verdict::too_hard) rather than run for minutes.
    std::size_t max_configurations = 4'000'000;

    static smr::domain_config small_bags() {
        smr::domain_config cfg;
        cfg.bag_threshold = 8;  // free while the threads run
        return cfg;
    }
};

struct run_result {
    std::string error;  // a thread's exception or validate()'s complaint
    report checked;
    double record_seconds = 0;  // the threads' run, recorder included
    double check_seconds = 0;   // the search (and the window, if it failed)

    bool ok() const { return error.empty() && checked.ok(); }
    std::string text() const { return error.empty() ? checked.text() : error; }
};

namespace detail {

/// Runs `body(index, context, rng)` on o.threads registered threads that start
/// together; a transactional structure's pending frees are flushed before
/// each thread leaves. Returns the first exception's message.
template <class Domain, class Structure, class Body>
std::string run_threads(Domain& domain, Structure& s, const run_options& o, Body body) {
    std::string error;
    std::mutex error_mutex;
    std::latch ready(o.threads);
    std::vector<std::thread> threads;
    for (int t = 0; t < o.threads; ++t) {
        threads.emplace_back([&, t] {
            bool arrived = false;
            try {
                auto self = smr::attach(domain);
                test::detail::xorshift64 rng(
                    test::detail::mix_seed(o.seed ^ (std::uint64_t(t) << 48)));
                ready.arrive_and_wait();
                arrived = true;
                body(t, self, rng);
                // Named by the trait, not probed: a probe that stopped
                // matching flush's signature would skip it silently.
                if constexpr (requires { Structure::transactional; }) s.flush(self);
            } catch (const std::exception& e) {
                if (!arrived) ready.count_down();
                std::lock_guard lock(error_mutex);
                if (error.empty()) error = std::string("thread: ") + e.what();
            }
        });
    }
    for (std::thread& thread : threads) thread.join();
    return error;
}

inline void note_times(run_result& out, std::chrono::steady_clock::time_point started,
                       std::chrono::steady_clock::time_point recorded,
                       std::chrono::steady_clock::time_point checking) {
    const auto done = std::chrono::steady_clock::now();
    out.record_seconds = std::chrono::duration<double>(recorded - started).count();
    out.check_seconds = std::chrono::duration<double>(done - checking).count();
}

}  // namespace detail

/// A set structure (insert/erase/contains by tid and key), recorded and
/// checked key by key.
template <class Domain, template <class...> class DS>
run_result run_set(const run_options& o) {
    Domain domain(o.cfg);
    DS<Domain> set(domain);
    std::set<std::uint64_t> initial;
    {
        auto self = smr::attach(domain);
        for (std::int64_t k = 0; k < o.key_range; k += 2) {
            set.insert(self, k, k);
            initial.insert(static_cast<std::uint64_t>(k));
        }
        if constexpr (requires { DS<Domain>::transactional; }) set.flush(self);
    }
    recorder rec(o.threads, o.ops_per_thread);
    run_result out;
    const auto started = std::chrono::steady_clock::now();
    out.error = detail::run_threads(domain, set, o, [&](int t, auto& self, auto& rng) {
        for (std::uint64_t i = 0; i < o.ops_per_thread; ++i) {
            const std::uint64_t r = rng.next();
            const auto key = static_cast<std::int64_t>(r % static_cast<std::uint64_t>(o.key_range));
            const auto k = static_cast<std::uint64_t>(key);
            const int dice = static_cast<int>((r >> 32) % 100);
            if (dice < o.insert_pct) {
                rec.record(t, op_kind::insert, k,
                           [&] { return std::uint64_t{set.insert(self, key, key)}; });
            } else if (dice < o.insert_pct + o.erase_pct) {
                rec.record(t, op_kind::remove, k,
                           [&] { return std::uint64_t{set.erase(self, key)}; });
            } else {
                rec.record(t, op_kind::contains, k,
                           [&] { return std::uint64_t{set.contains(self, key)}; });
            }
            domain.quiescent(self);  // an application quiescent state (QSBR)
        }
    });
    const auto recorded = std::chrono::steady_clock::now();
    if (out.error.empty()) {
        if (const auto v = set.validate(); !v.ok) out.error = "validate() failed: " + v.error;
    }
    const auto checking = std::chrono::steady_clock::now();
    out.checked = check_set(rec.merged(), initial, o.max_configurations);
    detail::note_times(out, started, recorded, checking);
    return out;
}

/// A FIFO queue (enqueue(self, key, value), dequeue(self) -> optional item):
/// every value enqueued is distinct, (thread + 1) << 32 | sequence.
template <class Domain, template <class...> class DS>
run_result run_queue(const run_options& o) {
    Domain domain(o.cfg);
    DS<Domain> queue(domain);
    recorder rec(o.threads, o.ops_per_thread);
    run_result out;
    const auto started = std::chrono::steady_clock::now();
    out.error = detail::run_threads(domain, queue, o, [&](int t, auto& self, auto& rng) {
        for (std::uint64_t i = 0; i < o.ops_per_thread; ++i) {
            const int dice = static_cast<int>(rng.next() % 100);
            if (dice < o.insert_pct) {
                const auto value = static_cast<std::int64_t>((std::uint64_t(t) + 1) << 32 | i);
                rec.record(t, op_kind::enqueue, static_cast<std::uint64_t>(value), [&] {
                    queue.enqueue(self, value, value);
                    return std::uint64_t{0};
                });
            } else {
                rec.record(t, op_kind::dequeue, 0, [&] {
                    const auto item = queue.dequeue(self);
                    return item ? static_cast<std::uint64_t>(item->key) : empty_queue;
                });
            }
            domain.quiescent(self);
        }
    });
    const auto recorded = std::chrono::steady_clock::now();
    if (out.error.empty()) {
        if (const auto v = queue.validate(); !v.ok) out.error = "validate() failed: " + v.error;
    }
    const auto checking = std::chrono::steady_clock::now();
    out.checked = check_queue(rec.merged(), {}, o.max_configurations);
    detail::note_times(out, started, recorded, checking);
    return out;
}

}  // namespace smr::lincheck
