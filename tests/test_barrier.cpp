// barrier() (docs/design.md, "barrier"): when it returns, every node retired
// before the call, by any thread, has been freed; it waits for operations
// that still hold retired nodes and for registered online threads to answer
// at their next operation, and not for offline or exited threads, whose
// garbage was handed over.
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

/// Schemes with something to flush: all but none (which frees nothing while
/// the domain lives) and lfrc (which frees at the last release, so nothing
/// retired waits).
constexpr bool keeps_garbage(smr::reclaimer_traits t) {
    return t.family != smr::reclaimer_family::leak &&
           t.family != smr::reclaimer_family::reference_count;
}

using flushing_domains = smr::test::gtest_types_of<
    typename smr::test::domains_where<smr::test::tested_domains, keeps_garbage>::type>::type;

template <class Domain>
class barrier_test : public ::testing::Test {};
TYPED_TEST_SUITE(barrier_test, flushing_domains, domain_names);

/// Those whose readers a barrier waits for: not the NBR family, which
/// restarts a reader in a read phase instead (test_nbr.cpp).
constexpr bool waits_for_readers(smr::reclaimer_traits t) {
    return keeps_garbage(t) && !t.uses_signals;
}
using waiting_domains = smr::test::gtest_types_of<
    typename smr::test::domains_where<smr::test::tested_domains, waits_for_readers>::type>::type;

template <class Domain>
class barrier_reader_test : public ::testing::Test {};
TYPED_TEST_SUITE(barrier_reader_test, waiting_domains, domain_names);

/// Large bags, so that without the barrier most of what was retired waits.
smr::domain_config lazy_config(int threads) {
    smr::domain_config config;
    config.max_threads = static_cast<std::size_t>(threads);
    config.bag_threshold = 100'000;
    return config;
}

// Workers retire a counted batch, say so, and go on operating (so that they
// answer the barrier at their next operation); the main thread, having seen
// every batch retired, calls barrier() and finds all of them freed.
TYPED_TEST(barrier_test, frees_everything_retired_before_it_by_every_thread) {
    using Domain = TypeParam;
    const int workers = smr::test::default_stress_threads();
    Domain domain(lazy_config(workers + 2));
    smr::context main_thread(domain);
    const auto m = main_thread.lent();
    smr::test::counted_cell<Domain> cell{domain.template allocate<counted_node<Domain>>(m)};
    std::atomic<std::uint64_t> before_freed{0};
    constexpr std::uint64_t per_worker = 500;
    std::atomic<int> retired_batches{0};
    std::atomic<bool> stop{false};
    std::vector<std::thread> pool;
    for (int t = 0; t < workers; ++t) {
        pool.emplace_back([&] {
            smr::context self(domain);
            for (std::uint64_t i = 0; i < per_worker; ++i)
                smr::test::replace_counted(domain, self, cell, &before_freed);
            retired_batches.fetch_add(1, std::memory_order_release);
            while (!stop.load(std::memory_order_acquire)) {
                smr::test::replace_counted(domain, self, cell, nullptr);
                std::this_thread::yield();
            }
        });
    }
    domain.thread_offline(m);
    while (retired_batches.load(std::memory_order_acquire) < workers) std::this_thread::yield();
    domain.thread_online(m);
    // Our own retires before the call count too.
    for (int i = 0; i < 100; ++i) smr::test::replace_counted(domain, m, cell, &before_freed);
    const std::uint64_t expected = per_worker * static_cast<std::uint64_t>(workers) + 100;
    ASSERT_LT(before_freed.load(), expected) << "nothing waited: the barrier has nothing to do";
    domain.barrier(m);
    EXPECT_EQ(before_freed.load(), expected);
    stop.store(true, std::memory_order_release);
    for (auto& thread : pool) thread.join();
    domain.free_unshared(cell.load());
}

// Garbage of an exited thread and of an offline one is freed, and neither
// delays the barrier (the test would hang otherwise).
TYPED_TEST(barrier_test, frees_what_exited_and_offline_threads_left) {
    using Domain = TypeParam;
    Domain domain(lazy_config(4));
    smr::context main_thread(domain);
    const auto m = main_thread.lent();
    smr::test::counted_cell<Domain> cell{domain.template allocate<counted_node<Domain>>(m)};
    std::atomic<std::uint64_t> freed{0};
    std::atomic<bool> offline{false};
    std::atomic<bool> done{false};
    domain.thread_offline(m);
    std::thread([&] {
        smr::context self(domain);
        for (int i = 0; i < 300; ++i) smr::test::replace_counted(domain, self, cell, &freed);
    }).join();
    std::thread idle([&] {
        smr::context self(domain);
        for (int i = 0; i < 300; ++i) smr::test::replace_counted(domain, self, cell, &freed);
        domain.thread_offline(self);
        offline.store(true, std::memory_order_release);
        while (!done.load(std::memory_order_acquire)) std::this_thread::yield();
        domain.thread_online(self);
    });
    while (!offline.load(std::memory_order_acquire)) std::this_thread::yield();
    domain.thread_online(m);
    domain.barrier(m);
    EXPECT_EQ(freed.load(), 600u);
    done.store(true, std::memory_order_release);
    idle.join();
    domain.free_unshared(cell.load());
}

// With count_remote_frees, a free is remote when the freeing thread is not the
// registration that allocated the node: here the main thread retires and its
// barrier frees 300 nodes another thread allocated (all remote) and 200 of
// its own (none), whatever the scheme's path to the free (scan, bag, liburcu's
// callback and return stack).
TYPED_TEST(barrier_test, counts_the_nodes_another_thread_allocated_as_remote_frees) {
    using Domain = TypeParam;
    using node = counted_node<Domain>;
    smr::domain_config config = lazy_config(3);
    config.count_remote_frees = true;
    Domain domain(config);
    smr::context main_thread(domain);
    const auto m = main_thread.lent();
    std::vector<node*> theirs;
    std::thread([&] {
        smr::context other(domain);
        for (int i = 0; i < 300; ++i) theirs.push_back(domain.template allocate<node>(other));
    }).join();
    std::atomic<std::uint64_t> freed{0};
    {
        smr::op_guard op(domain, m);
        SMR_READ_PHASE_BEGIN(domain, m);
        domain.read_phase_end(m);
        for (int i = 0; i < 500; ++i) {
            node* n =
                i < 300 ? theirs[static_cast<std::size_t>(i)] : domain.template allocate<node>(m);
            n->freed = &freed;
            domain.retire(m, n);
        }
    }
    domain.quiescent(m);
    domain.discard(m, domain.template allocate<node>(m));  // freed at once, by its allocator
    domain.barrier(m);
    ASSERT_EQ(freed.load(), 500u);
    const smr::reclaimer_stats stats = domain.stats();
    EXPECT_EQ(stats.freed, 500u);
    EXPECT_EQ(stats.remote_frees, 300u);
}

// A reader inside an operation that holds a retired node delays the barrier
// until its operation ends, and the node is not freed before.
TYPED_TEST(barrier_reader_test, waits_for_an_operation_that_holds_a_retired_node) {
    using Domain = TypeParam;
    Domain domain(lazy_config(4));
    smr::context main_thread(domain);
    const auto m = main_thread.lent();
    std::atomic<std::uint64_t> freed{0};
    smr::test::counted_cell<Domain> cell{domain.template allocate<counted_node<Domain>>(m)};
    std::atomic<bool> holding{false};
    std::atomic<bool> release{false};
    std::thread reader([&] {
        smr::context self(domain);
        {
            smr::op_guard op(domain, self);
            domain.protect(self, 0, cell);
            holding.store(true, std::memory_order_release);
            while (!release.load(std::memory_order_acquire)) std::this_thread::yield();
        }
        domain.quiescent(self);
        domain.thread_offline(self);  // answers, and stops being waited for
        while (release.load(std::memory_order_acquire)) std::this_thread::yield();
    });
    while (!holding.load(std::memory_order_acquire)) std::this_thread::yield();
    smr::test::replace_counted(domain, m, cell, &freed);  // retires the node the reader holds
    domain.thread_offline(m);                             // hands it over; not waited for
    std::atomic<bool> returned{false};
    std::thread flusher([&] {
        smr::context self(domain);
        domain.barrier(self);
        returned.store(true, std::memory_order_release);
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_FALSE(returned.load(std::memory_order_acquire)) << "did not wait for the reader";
    EXPECT_EQ(freed.load(), 0u) << "freed while the reader held it";
    release.store(true, std::memory_order_release);
    flusher.join();
    EXPECT_EQ(freed.load(), 1u);
    release.store(false, std::memory_order_release);
    reader.join();
    domain.thread_online(m);
    domain.free_unshared(cell.load());
}

// Two barriers at once: the second waits for the first while offline (its
// garbage handed over), so neither waits for the other to operate.
TYPED_TEST(barrier_test, two_barriers_at_once_both_return) {
    using Domain = TypeParam;
    Domain domain(lazy_config(4));
    smr::context main_thread(domain);
    const auto m = main_thread.lent();
    smr::test::counted_cell<Domain> cell{domain.template allocate<counted_node<Domain>>(m)};
    std::atomic<std::uint64_t> freed{0};
    std::atomic<int> ready{0};
    std::thread other([&] {
        smr::context self(domain);
        for (int i = 0; i < 100; ++i) smr::test::replace_counted(domain, self, cell, &freed);
        ready.fetch_add(1);
        while (ready.load() < 2) std::this_thread::yield();
        domain.barrier(self);
    });
    for (int i = 0; i < 100; ++i) smr::test::replace_counted(domain, m, cell, &freed);
    ready.fetch_add(1);
    while (ready.load() < 2) std::this_thread::yield();
    domain.barrier(m);
    domain.thread_offline(m);  // idle while the other barrier may still run
    other.join();
    domain.thread_online(m);
    EXPECT_EQ(freed.load(), 200u);
    domain.free_unshared(cell.load());
}

// A thread that retires while offline (an operation of its own, for the
// epoch schemes) stays offline: the barrier neither waits for it nor misses
// the node.
TYPED_TEST(barrier_test, a_retire_while_offline_is_covered_without_waiting) {
    using Domain = TypeParam;
    Domain domain(lazy_config(4));
    smr::context main_thread(domain);
    const auto m = main_thread.lent();
    smr::test::counted_cell<Domain> cell{domain.template allocate<counted_node<Domain>>(m)};
    std::atomic<std::uint64_t> freed{0};
    std::atomic<bool> retired{false};
    std::atomic<bool> done{false};
    std::thread idle([&] {
        smr::context self(domain);
        domain.thread_offline(self);
        auto* fresh = domain.template allocate<counted_node<Domain>>(self);
        counted_node<Domain>* old = cell.exchange(fresh, std::memory_order_acq_rel);
        old->freed = &freed;
        domain.retire(self, old);
        retired.store(true, std::memory_order_release);
        while (!done.load(std::memory_order_acquire)) std::this_thread::yield();
        domain.thread_online(self);
    });
    while (!retired.load(std::memory_order_acquire)) std::this_thread::yield();
    domain.barrier(m);
    EXPECT_EQ(freed.load(), 1u);
    done.store(true, std::memory_order_release);
    idle.join();
    domain.free_unshared(cell.load());
}

}  // namespace
