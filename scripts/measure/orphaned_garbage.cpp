// Garbage that outlives the threads that retired it, per reclaimer (issue 31,
// item 3).
//
//   exit:   a worker retires 20,000 nodes (one per operation) and exits while
//           the main thread stays registered; the main thread then runs
//           200,000 operations that each retire a node. Printed: the nodes
//           the worker retired that are still not freed.
//   shrink: 8 workers run 25,000 such operations each, then 6 exit and 2 go
//           on for 100,000 more each; the domain has smrbench's 32K bags.
//           Printed: the nodes the 6 retired that are still not freed.
// Library defaults otherwise (domain_config{}).
//
// Then barrier(): with N registered threads (N - 1 workers that keep
// retiring, and the caller), the time of one barrier() call, median and range
// over 7 calls, for N = 2 and 8 (barrier = 1 prints only this table).
//
//   g++ -std=c++20 -O2 -Iinclude scripts/measure/orphaned_garbage.cpp
//       -o /tmp/orphaned_garbage -pthread -lurcu-qsbr -lurcu-memb
//   /tmp/orphaned_garbage            # one line per reclaimer
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "smr/reclaim/guards.hpp"
#include "smr/reclaim/measured.hpp"

namespace {

template <class Domain>
struct counted_node final : Domain::node_base {
    std::atomic<std::uint64_t>* freed;
    explicit counted_node(std::atomic<std::uint64_t>* counter) : freed(counter) {}
    ~counted_node() {
        if (freed != nullptr) freed->fetch_add(1, std::memory_order_relaxed);
    }
};

/// One operation that replaces the cell's node and retires the old one,
/// which counts into `counter` when it is freed (the retirer's counter).
template <class Domain>
void replace(Domain& domain, smr::context_ref<Domain> self,
             std::atomic<counted_node<Domain>*>& cell, std::atomic<std::uint64_t>* counter) {
    {
        smr::op_guard op(domain, self);
        SMR_READ_PHASE_BEGIN(domain, self);
        domain.read_phase_end(self);
        auto* fresh = domain.template allocate<counted_node<Domain>>(self, nullptr);
        counted_node<Domain>* old = cell.exchange(fresh, std::memory_order_acq_rel);
        old->freed = counter;  // only its destructor reads it
        domain.retire(self, old);
    }
    domain.quiescent(self);
}

template <class Domain>
std::uint64_t exit_scenario() {
    Domain domain(smr::domain_config{});
    smr::context main_thread(domain);
    const auto m = main_thread.lent();
    std::atomic<counted_node<Domain>*> cell{
        domain.template allocate<counted_node<Domain>>(m, nullptr)};
    std::atomic<std::uint64_t> worker_freed{0};
    constexpr std::uint64_t worker_retires = 20'000;
    domain.thread_offline(m);  // idle while the worker runs (qsbr, nebr: holds nobody up)
    std::thread([&] {
        smr::context self(domain);
        for (std::uint64_t i = 0; i < worker_retires; ++i)
            replace(domain, self, cell, &worker_freed);
    }).join();
    domain.thread_online(m);
    for (int i = 0; i < 200'000; ++i) replace(domain, m, cell, nullptr);
    const std::uint64_t left = worker_retires - worker_freed.load();
    domain.free_unshared(cell.load());
    return left;
}

template <class Domain>
std::uint64_t shrink_scenario() {
    smr::domain_config config;
    config.bag_threshold = 32 * 1024;  // smrbench's
    Domain domain(config);
    std::atomic<counted_node<Domain>*> cell{nullptr};
    {
        smr::context setup(domain);
        cell.store(domain.template allocate<counted_node<Domain>>(setup, nullptr));
    }
    std::atomic<int> running{8};
    std::atomic<std::uint64_t> exited_freed{0};
    std::vector<std::thread> workers;
    for (int t = 0; t < 8; ++t) {
        workers.emplace_back([&, t] {
            smr::context self(domain);
            std::atomic<std::uint64_t>* counter = t < 6 ? &exited_freed : nullptr;
            for (int i = 0; i < 25'000; ++i) replace(domain, self, cell, counter);
            running.fetch_sub(1);
            if (t < 6) return;  // the pool shrinks to two
            while (running.load() > 2) std::this_thread::yield();
            for (int i = 0; i < 100'000; ++i) replace(domain, self, cell, nullptr);
        });
    }
    for (auto& w : workers) w.join();
    const std::uint64_t left = 6 * 25'000 - exited_freed.load();
    domain.free_unshared(cell.load());
    return left;
}

struct spread {
    double median, low, high;
};

/// Microseconds of barrier() with `threads` registered threads.
template <class Domain>
spread barrier_time(int threads) {
    Domain domain(smr::domain_config{});
    std::atomic<counted_node<Domain>*> cell{nullptr};
    smr::context caller(domain);
    const auto c = caller.lent();
    cell.store(domain.template allocate<counted_node<Domain>>(c, nullptr));
    std::atomic<bool> stop{false};
    std::atomic<int> running{0};
    std::vector<std::thread> workers;
    for (int t = 1; t < threads; ++t) {
        workers.emplace_back([&] {
            smr::context self(domain);
            replace(domain, self, cell, nullptr);
            running.fetch_add(1);
            while (!stop.load(std::memory_order_relaxed)) replace(domain, self, cell, nullptr);
        });
    }
    // Every worker registered and operating before the first call (the
    // caller is offline meanwhile: it holds nobody up).
    domain.thread_offline(c);
    while (running.load() < threads - 1) std::this_thread::yield();
    domain.thread_online(c);
    std::vector<double> us;
    for (int call = 0; call < 7; ++call) {
        for (int i = 0; i < 1000; ++i) replace(domain, c, cell, nullptr);
        const auto start = std::chrono::steady_clock::now();
        domain.barrier(c);
        us.push_back(
            std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
                .count());
    }
    stop.store(true);
    for (auto& w : workers) w.join();
    domain.free_unshared(cell.load());
    std::sort(us.begin(), us.end());
    return {us[us.size() / 2], us.front(), us.back()};
}

template <class Domain>
void measure_barrier() {
    if constexpr (Domain::traits.family != smr::reclaimer_family::leak &&
                  Domain::traits.family != smr::reclaimer_family::reference_count) {
        const spread two = barrier_time<Domain>(2);
        const spread eight = barrier_time<Domain>(8);
        std::printf("%-16s %10.0f [%6.0f-%7.0f] %10.0f [%6.0f-%7.0f]\n",
                    std::string(Domain::traits.name).c_str(), two.median, two.low, two.high,
                    eight.median, eight.low, eight.high);
    }
}

template <class Domain>
void measure() {
    // none frees nothing while running; lfrc frees at the last release (an
    // exiting thread's end_op), and its links must be counted, which a plain
    // exchange is not.
    constexpr smr::reclaimer_family family = Domain::traits.family;
    if constexpr (family != smr::reclaimer_family::leak &&
                  family != smr::reclaimer_family::reference_count) {
        const std::uint64_t exit_left = exit_scenario<Domain>();
        const std::uint64_t shrink_left = shrink_scenario<Domain>();
        std::printf("%-16s %-16s %12llu %12llu\n", std::string(Domain::traits.name).c_str(),
                    std::string(smr::to_string(family)).c_str(),
                    static_cast<unsigned long long>(exit_left),
                    static_cast<unsigned long long>(shrink_left));
    }
}

template <class... Domains>
void measure_all(std::tuple<Domains...>*) {
    (measure<Domains>(), ...);
}

template <class... Domains>
void measure_barriers(std::tuple<Domains...>*) {
    (measure_barrier<Domains>(), ...);
}

}  // namespace

int main(int argc, char** argv) {
    const bool only_barrier = argc > 1 && std::atoi(argv[1]) == 1;
    if (!only_barrier) {
        std::printf("%-16s %-16s %12s %12s\n", "reclaimer", "family", "exit: left", "shrink: left");
        measure_all(static_cast<smr::measured_domains*>(nullptr));
    }
    std::printf("\nbarrier() in microseconds, median [min-max] of 7\n%-16s %26s %26s\n",
                "reclaimer", "2 threads", "8 threads");
    measure_barriers(static_cast<smr::measured_domains*>(nullptr));
}
