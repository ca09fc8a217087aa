// Garbage of threads that exit (docs/design.md, "Threads that exit"): what a
// thread retired and could not free yet goes to the domain's orphanage when
// it unregisters, and the threads that still run adopt it once it is safe.
// Before, it stayed in the vacated slot until another thread registered
// there or the domain was destroyed.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "counted_nodes.hpp"
#include "one_thread_scenarios.hpp"
#include "smr/reclaim/guards.hpp"
#include "smr/reclaim/measured.hpp"
#include "stress.hpp"
#include "tested_domains.hpp"

namespace {

using smr::test::counted_node;
using smr::test::domain_names;

/// Every scheme that frees while threads run and keeps garbage: not none, and
/// not lfrc, which frees a node at its last release (an exiting thread's
/// end_op releases everything it held).
constexpr bool adopts_orphans(smr::reclaimer_traits t) {
    return t.family != smr::reclaimer_family::leak &&
           t.family != smr::reclaimer_family::reference_count;
}

using orphaning_domains = smr::test::gtest_types_of<
    typename smr::test::domains_where<smr::test::tested_domains, adopts_orphans>::type>::type;

template <class Domain>
class thread_exit_test : public ::testing::Test {};
TYPED_TEST_SUITE(thread_exit_test, orphaning_domains, domain_names);

smr::domain_config config_for(int threads) {
    smr::domain_config config = smr::test::eager_config();
    config.max_threads = static_cast<std::size_t>(threads);
    config.bag_threshold = 64;  // several scans' worth stays unfreed at exit
    return config;
}

/// The remaining thread operates until `freed` reaches `expected`, at most
/// `limit` operations. The liburcu adapters get their nodes back from
/// liburcu's call_rcu thread whenever its grace periods end, so for them the
/// bound is a generous time instead (it only limits a failing run).
template <class Domain>
void operate_until(Domain& domain, smr::context_ref<Domain> self,
                   smr::test::counted_cell<Domain>& cell, const std::atomic<std::uint64_t>& freed,
                   std::uint64_t expected, int limit) {
    constexpr bool asynchronous = Domain::traits.family == smr::reclaimer_family::external;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    for (int ops = 0; freed.load() < expected; ++ops) {
        if (asynchronous ? std::chrono::steady_clock::now() > deadline : ops == limit) return;
        smr::test::replace_counted(domain, self, cell, nullptr);
        if (asynchronous) std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
}

TYPED_TEST(thread_exit_test, a_remaining_thread_frees_what_an_exited_one_retired) {
    using Domain = TypeParam;
    Domain domain(config_for(4));
    smr::context main_thread(domain);
    const auto m = main_thread.lent();
    smr::test::counted_cell<Domain> cell{domain.template allocate<counted_node<Domain>>(m)};
    std::atomic<std::uint64_t> worker_freed{0};
    constexpr std::uint64_t worker_retires = 1000;
    domain.thread_offline(m);  // waits for the worker: holds nobody up
    std::thread([&] {
        smr::context self(domain);
        for (std::uint64_t i = 0; i < worker_retires; ++i)
            smr::test::replace_counted(domain, self, cell, &worker_freed);
    }).join();
    ASSERT_LT(worker_freed.load(), worker_retires) << "nothing left to orphan: retire more";
    domain.thread_online(m);
    operate_until(domain, m, cell, worker_freed, worker_retires, 1000);
    EXPECT_EQ(worker_freed.load(), worker_retires) << "the exited worker's garbage stayed";
    domain.free_unshared(cell.load());
}

// Under amortized free a thread also holds nodes already safe but not yet
// freed: an exiting thread frees them itself (as the orphans it is handed
// later are freed by the adopter, k per operation plus its catch-up share).
// The worker retires eight nodes per operation and frees one, so its
// freeable list grows.
TYPED_TEST(thread_exit_test, an_exited_threads_freeable_list_is_freed_too) {
    using Domain = TypeParam;
    smr::domain_config config = config_for(4);
    config.free.mode = smr::free_mode::amortized;
    Domain domain(config);
    smr::context main_thread(domain);
    const auto m = main_thread.lent();
    smr::test::counted_cell<Domain> cell{domain.template allocate<counted_node<Domain>>(m)};
    std::atomic<std::uint64_t> worker_freed{0};
    constexpr std::uint64_t worker_retires = 1000 * 8;
    domain.thread_offline(m);
    std::size_t freeable_at_exit = 0;
    std::thread([&] {
        smr::context self(domain);
        for (int i = 0; i < 1000; ++i)
            smr::test::replace_counted(domain, self, cell, &worker_freed, 8);
        freeable_at_exit = domain.freeable_size(self.tid());
    }).join();
    // (The liburcu adapters get nodes back whenever liburcu's thread returns
    // them, so whether any were waiting at the exit is up to the scheduler.)
    if (Domain::traits.family != smr::reclaimer_family::external) {
        EXPECT_GT(freeable_at_exit, 0u) << "nothing safe was waiting: the test shows nothing";
    }
    domain.thread_online(m);
    operate_until(domain, m, cell, worker_freed, worker_retires, 10'000);
    EXPECT_EQ(worker_freed.load(), worker_retires);
    domain.free_unshared(cell.load());
}

TYPED_TEST(thread_exit_test, a_pool_that_shrinks_leaves_no_garbage_behind) {
    using Domain = TypeParam;
    const int workers = smr::test::default_stress_threads();
    Domain domain(config_for(workers + 1));
    smr::context main_thread(domain);
    const auto m = main_thread.lent();
    smr::test::counted_cell<Domain> cell{domain.template allocate<counted_node<Domain>>(m)};
    std::atomic<std::uint64_t> exited_freed{0};
    constexpr std::uint64_t per_worker = 2000;
    domain.thread_offline(m);
    std::vector<std::thread> pool;
    for (int t = 0; t < workers; ++t) {
        pool.emplace_back([&] {
            smr::context self(domain);
            for (std::uint64_t i = 0; i < per_worker; ++i)
                smr::test::replace_counted(domain, self, cell, &exited_freed);
        });
    }
    for (auto& thread : pool) thread.join();
    const std::uint64_t retired = per_worker * static_cast<std::uint64_t>(workers);
    domain.thread_online(m);
    operate_until(domain, m, cell, exited_freed, retired, 1000);
    EXPECT_EQ(exited_freed.load(), retired) << "garbage stayed in vacated slots";
    domain.free_unshared(cell.load());
}

}  // namespace
