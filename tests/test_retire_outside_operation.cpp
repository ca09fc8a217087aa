// Retiring outside an operation (docs/design.md, "Retire outside an
// operation"): every reclaimer but lfrc accepts it and must still keep the
// node until every reader that could hold it is done.
//
// The deterministic half runs on one OS thread with three registered slots: a
// retirer that last operated many epochs ago and is idle (offline where the
// scheme has the notion), a reader that holds the node inside an operation,
// and a writer whose operations move the epoch or era on as far as the reader
// allows. The retirer unlinks the node and retires it between operations, then
// resumes operating. Before the fix, debra and ebr labelled the node with the
// retirer's stale local epoch (nebr and qsbr with an offline thread's), so the
// retirer's next operation freed it while the reader still held it.
//
// The concurrent half is the pattern of an RCU-style configuration: readers
// read the current version inside operations, writers publish a new version
// and retire the old one after their operation, with more threads than cores
// under ASan (a version freed too early is a heap-use-after-free) and TSan.
#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "one_thread_scenarios.hpp"
#include "smr/reclaim/guards.hpp"
#include "smr/reclaim/measured.hpp"
#include "stress.hpp"
#include "tested_domains.hpp"

namespace {

using smr::test::domain_names;
using smr::test::eager_config;
using smr::test::flagged_node;
using smr::test::replace;

// lfrc refuses (a retired node must still be held by its retirer: an
// assertion, tests/test_lfrc.cpp); the signal schemes would signal the one OS
// thread that plays every slot, so they run in the concurrent half only.
using one_thread_domains = smr::test::gtest_types_of<
    typename smr::test::domains_where<smr::all_domains, [](smr::reclaimer_traits t) {
        return t.family != smr::reclaimer_family::reference_count && !t.uses_signals;
    }>::type>::type;

template <class Domain>
class retire_outside_test : public ::testing::Test {};
TYPED_TEST_SUITE(retire_outside_test, one_thread_domains, domain_names);

/// One operation and quiescent state of `self`, which does nothing else.
template <class Domain>
void idle_operation(Domain& domain, smr::context_ref<Domain> self) {
    { smr::op_guard op(domain, self); }  // token schemes pass the token on here
    domain.quiescent(self);
}

TYPED_TEST(retire_outside_test, a_stale_thread_keeps_the_node_from_a_later_reader) {
    using Domain = TypeParam;
    using node = flagged_node<Domain>;
    Domain domain(eager_config());
    smr::context retirer(domain);
    smr::context reader(domain);
    smr::context writer(domain);
    const auto a = retirer.lent();
    const auto r = reader.lent();
    const auto w = writer.lent();
    bool destroyed = false;
    std::atomic<node*> cell{domain.template allocate_outside_op<node>(a, &destroyed)};
    std::atomic<node*> churn{domain.template allocate_outside_op<node>(w, nullptr)};
    constexpr int rounds = 100;

    // The retirer operates once, then idles: its local epoch stays behind
    // while the others move the global one on.
    idle_operation(domain, a);
    domain.thread_offline(a);
    for (int round = 0; round < rounds; ++round) {
        idle_operation(domain, r);
        replace(domain, w, churn);
    }
    {
        smr::op_guard op(domain, r);
        SMR_READ_PHASE_BEGIN(domain, r);
        ASSERT_NE(domain.protect(r, 0, cell), nullptr);
        // Unlinked and retired between the retirer's operations.
        node* fresh = domain.template allocate_outside_op<node>(a, nullptr);
        domain.retire(a, cell.exchange(fresh, std::memory_order_acq_rel));
        domain.thread_online(a);
        for (int round = 0; round < rounds; ++round) {
            idle_operation(domain, a);
            replace(domain, w, churn);
        }
        EXPECT_FALSE(destroyed) << "freed while the reader held it";
        domain.read_phase_end(r);
    }
    // The reader is done: the retirer's own operations free it in time
    // (except under none, which frees nothing while running); the scan
    // schemes look at a retire list when it grows, so the retirer retires.
    for (int round = 0; round < rounds && !destroyed; ++round) {
        idle_operation(domain, r);
        replace(domain, a, churn);
        replace(domain, w, churn);
    }
    if (Domain::traits.family != smr::reclaimer_family::leak) {
        EXPECT_TRUE(destroyed) << "never freed";
    }
    domain.free_unshared(cell.load(std::memory_order_relaxed));
    domain.free_unshared(churn.load(std::memory_order_relaxed));
}

/// A published version: readers check that it is still intact.
template <class Domain>
struct version final : Domain::node_base {
    static constexpr std::uint64_t intact = 0xC0FFEE'C0FFEE'C0FEull;
    explicit version(std::uint64_t n) noexcept : number(n) {}
    ~version() { seal = 0; }
    std::uint64_t number;
    std::uint64_t seal = intact;
};

// Everything the build's sanitizer can judge but lfrc (whose links must be
// counted: a plain exchange does not move a count).
using concurrent_domains = smr::test::gtest_types_of<
    typename smr::test::domains_where<smr::test::tested_domains, [](smr::reclaimer_traits t) {
        return t.family != smr::reclaimer_family::reference_count;
    }>::type>::type;

template <class Domain>
class retire_outside_concurrent_test : public ::testing::Test {};
TYPED_TEST_SUITE(retire_outside_concurrent_test, concurrent_domains, domain_names);

TYPED_TEST(retire_outside_concurrent_test, writers_retire_old_versions_between_operations) {
    using Domain = TypeParam;
    smr::domain_config config = eager_config();
    const int threads = smr::test::default_stress_threads();
    config.max_threads = static_cast<std::size_t>(threads);
    config.bag_threshold = 8;
    Domain domain(config);
    std::atomic<version<Domain>*> current{nullptr};
    {
        smr::context setup(domain);
        current.store(domain.template allocate_outside_op<version<Domain>>(setup, 0));
    }
    constexpr int iterations = 20000;
    std::atomic<int> torn{0};
    std::vector<std::thread> workers;
    std::barrier start(threads);
    for (int t = 0; t < threads; ++t) {
        workers.emplace_back([&, t] {
            smr::context self(domain);
            start.arrive_and_wait();
            for (int i = 0; i < iterations; ++i) {
                if (!smr::test::read_intact(domain, self, current)) torn.fetch_add(1);
                if (t % 2 == 0 && i % 4 == 0) {
                    // Publish and retire outside any operation.
                    auto* fresh = domain.template allocate_outside_op<version<Domain>>(
                        self, static_cast<std::uint64_t>(i));
                    domain.retire(self, current.exchange(fresh, std::memory_order_acq_rel));
                }
            }
        });
    }
    for (auto& worker : workers) worker.join();
    EXPECT_EQ(torn.load(), 0);
    // Whether any version was freed while the threads ran depends on the
    // scheduler (a preempted token holder stops the ring); that retiring
    // outside an operation frees in time is the deterministic test's job.
    EXPECT_EQ(domain.stats().retired,
              static_cast<std::uint64_t>((threads + 1) / 2 * (iterations / 4)));
    domain.free_unshared(current.load());
}

}  // namespace
