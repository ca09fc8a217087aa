// The exact operation at which each epoch scheme frees a retired node.
//
// The concurrent tests see a scheme that frees one epoch early only when a
// reader happens to hold the node at that moment: a few runs in twenty. Here
// two registered slots are driven in turn by one OS thread with the eager
// configuration (every operation looks at the epoch, every retire may free),
// so the schedule is the same at every run and the operation at which the
// node is freed is a number that each scheme's algorithm fixes. A scheme
// that frees a grace period early or late changes the number.
//
// The scenario: slot `a` retires node X inside an operation; then the other
// slot `b` and `a` take turns, one operation each (a retires a fresh node in
// each of its operations, b only enters and leaves). Steps count those
// operations, b's first. A second scenario holds b inside an operation that
// begins before X's retirement: X must outlive any number of a's operations,
// and then be freed at a step fixed just as exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "one_thread_scenarios.hpp"
#include "smr/core/clock.hpp"
#include "smr/reclaim/guards.hpp"
#include "smr/trace/timeline.hpp"

namespace {

using smr::test::domain_names;
using smr::test::eager_config;
using smr::test::flagged_node;
using smr::test::replace;

using epoch_domains = smr::test::gtest_types_of<
    typename smr::test::domains_where<smr::all_domains, [](smr::reclaimer_traits t) {
        return t.family == smr::reclaimer_family::epoch;
    }>::type>::type;

template <class Domain>
class free_epoch_test : public ::testing::Test {};
TYPED_TEST_SUITE(free_epoch_test, epoch_domains, domain_names);

/// Steps after X's retirement at which each scheme frees it. The eager
/// settings let every operation try to advance the epoch; only the owner
/// frees its bags.
///  - ebr, nebr, qsbr share detail::epoch_bags: a bag retired in the owner's
///    local epoch e is freed when the owner enters e+3 or later. In ebr
///    every operation advances (the other slot is outside any operation), so
///    the owner enters e+2 at step 2 and e+4 at step 4. In nebr and qsbr
///    only b's operations advance (an online slot counts until it
///    announces), so the epoch is e+3 after step 5 and the owner enters it
///    at step 6.
///  - debra (Brown's): a bag is freed at the third epoch change the owner
///    observes, however far each moved. Every operation advances, so the
///    owner observes a change of two at steps 2, 4 and 6.
///  - rcu: X is stamped e, the epoch after its unlink; a scan frees what is
///    stamped below every reservation. The owner's next operation reserves
///    e itself (step 2); the one after reserves e+1 (step 4).
///  - qsbr_ibr: as rcu, but each slot reserves at the quiescent state that
///    ends its step rather than at the step's start; its scans run inside
///    the owner's steps as rcu's do, and the first that sees both
///    reservations above X's stamp is again at step 4.
///  - Token-EBR: a receipt closes the bag retired since the last one and
///    frees the bag the previous receipt closed. The token, at b after the
///    warm-up, reaches the owner at step 2 (closing X's bag) and step 4
///    (freeing it): one hop per operation around two slots.
constexpr int expected_steps(std::string_view scheme) {
    if (scheme == "ebr" || scheme == "rcu") return 4;
    if (scheme == "nebr" || scheme == "qsbr" || scheme == "debra") return 6;
    if (scheme.starts_with("token_")) return 4;
    if (scheme == "qsbr_ibr") return 4;
    return -1;
}

/// Steps after b's stalled operation ends (a's turn first) at which each
/// scheme frees X. During the stall the epoch cannot pass b's, and X is
/// retired in the owner's local epoch e.
///  - ebr: the owner's step 1 enters no new epoch and advances; b's step 2
///    advances to e+2, the owner's step 3 enters it and advances, b's step 4
///    to e+4, which the owner enters at step 5.
///  - debra: as ebr, but the owner observes its third change (e+6) at step 7.
///  - nebr: b's steps advance (2, 4, 6), so e+3 is entered at step 7.
///  - qsbr: b's stall ends with its quiescent state, which announces e and,
///    the owner being in e already, advances to e+1; the owner enters it at
///    step 1, b advances at steps 2 and 4, and the owner enters e+3 at 5.
///  - rcu: no reservation is left at or below X's stamp, so the owner's
///    first scan frees it.
///  - qsbr_ibr: b's protection during the stall is the reservation of its
///    last quiescent state, before X's retirement; the quiescent state that
///    ends the stall reserves the current epoch, and the owner's first scan
///    frees X.
///  - Token-EBR: as ebr, one step later than without the stall.
constexpr int expected_after_stall(std::string_view scheme) {
    if (scheme == "ebr" || scheme == "qsbr") return 5;
    if (scheme == "nebr" || scheme == "debra") return 7;
    if (scheme == "rcu") return 1;
    if (scheme.starts_with("token_")) return 5;
    if (scheme == "qsbr_ibr") return 1;
    return -1;
}

/// One operation of `self` that reads nothing and retires nothing.
template <class Domain>
void idle_operation(Domain& domain, smr::context_ref<Domain> self) {
    { smr::op_guard op(domain, self); }
    domain.quiescent(self);
}

/// Runs b, a, b, a... (a, b, a, b... if `a_first`) until X is destroyed or
/// `limit` steps; returns the step that freed X (1 = the first operation),
/// or 0.
template <class Domain>
int steps_until_freed(Domain& domain, smr::context_ref<Domain> a, smr::context_ref<Domain> b,
                      std::atomic<flagged_node<Domain>*>& churn, const bool& destroyed,
                      bool a_first = false, int limit = 64) {
    for (int step = 1; step <= limit; ++step) {
        if ((step % 2 == 1) != a_first) {
            idle_operation(domain, b);
        } else {
            replace(domain, a, churn);
        }
        if (destroyed) return step;
    }
    return 0;
}

/// Two slots of one domain in the eager configuration, the node X (`cell`)
/// and the node `a` churns through, after a warm-up in which both slots
/// operate until the schedule is periodic.
template <class Domain>
struct two_slots {
    using node = flagged_node<Domain>;
    Domain domain{eager_config()};
    smr::context<Domain> first{domain};
    smr::context<Domain> second{domain};
    const smr::context_ref<Domain> a = first;
    const smr::context_ref<Domain> b = second;
    bool destroyed = false;
    std::atomic<node*> cell{domain.template allocate_outside_op<node>(a, &destroyed)};
    std::atomic<node*> churn{domain.template allocate_outside_op<node>(a, nullptr)};

    two_slots() {
        for (int round = 0; round < 8; ++round) {
            idle_operation(domain, b);
            replace(domain, a, churn);
        }
    }
    ~two_slots() {
        domain.free_unshared(cell.load(std::memory_order_relaxed));
        domain.free_unshared(churn.load(std::memory_order_relaxed));
    }
    two_slots(const two_slots&) = delete;
    two_slots& operator=(const two_slots&) = delete;

    int steps_to_free(bool a_first = false) {
        return steps_until_freed(domain, a, b, churn, destroyed, a_first);
    }
};

TYPED_TEST(free_epoch_test, a_retired_node_is_freed_at_the_step_the_algorithm_fixes) {
    const int expected = expected_steps(TypeParam::traits.name);
    ASSERT_GT(expected, 0) << "no expectation for " << TypeParam::traits.name;
    two_slots<TypeParam> s;
    replace(s.domain, s.a, s.cell);  // retires X
    EXPECT_EQ(s.steps_to_free(), expected) << TypeParam::traits.name;
}

/// The schemes whose epoch domain_config::min_epoch_us spaces out.
using min_epoch_domains = smr::test::gtest_types_of<typename smr::test::domains_where<
    smr::all_domains, [](smr::reclaimer_traits t) { return t.reads.min_epoch_us; }>::type>::type;

template <class Domain>
class min_epoch_test : public ::testing::Test {};
TYPED_TEST_SUITE(min_epoch_test, min_epoch_domains, domain_names);

// With a minimum epoch, however often a thread tries (eager settings: at
// every operation) the epoch advances no sooner than the minimum after the
// last advance (the first: after the domain was made), and it still advances.
TYPED_TEST(min_epoch_test, advances_no_sooner_than_the_minimum_and_still_does) {
    using node = flagged_node<TypeParam>;
    smr::domain_config config = eager_config();
    config.min_epoch_us = 2'000;
    smr::core::ns_per_tick();  // the clock's one calibration (20 ms), before ours starts
    const auto made = std::chrono::steady_clock::now();
    TypeParam domain(config);
    smr::context writer(domain);
    std::atomic<node*> cell{domain.template allocate<node>(writer, nullptr)};
    constexpr std::uint64_t advances = 5;
    const auto deadline = made + std::chrono::seconds(30);
    std::uint64_t operations = 0;
    while (domain.stats().epochs < advances && std::chrono::steady_clock::now() < deadline) {
        replace(domain, writer, cell);
        ++operations;
    }
    const auto elapsed = std::chrono::steady_clock::now() - made;
    ASSERT_EQ(domain.stats().epochs, advances) << "the epoch stopped advancing";
    EXPECT_GE(elapsed, advances * std::chrono::microseconds(config.min_epoch_us));
    EXPECT_GT(operations, advances) << "an epoch per operation: the minimum held nothing back";
    domain.free_unshared(cell.load());
}

TYPED_TEST(free_epoch_test, a_stalled_operation_keeps_the_node_until_it_ends) {
    const int expected = expected_after_stall(TypeParam::traits.name);
    ASSERT_GT(expected, 0) << "no expectation for " << TypeParam::traits.name;
    two_slots<TypeParam> s;
    {
        smr::op_guard stalled(s.domain, s.b);  // may read X from here on
        replace(s.domain, s.a, s.cell);        // retires X
        for (int op = 0; op < 100; ++op) replace(s.domain, s.a, s.churn);
        EXPECT_FALSE(s.destroyed) << "freed under an operation that began before its retirement";
    }
    s.domain.quiescent(s.b);
    EXPECT_EQ(s.steps_to_free(true), expected) << TypeParam::traits.name;
}

// A thread that registers and reads before its first quiescent state holds
// what it reads: qsbr_ibr reserves when a thread comes online (its artifact
// leaves the reservation empty until the first operation ends).
TYPED_TEST(free_epoch_test, a_new_thread_is_protected_before_its_first_quiescent_state) {
    using node = flagged_node<TypeParam>;
    bool destroyed = false;  // outlives the domain, which may free X last
    TypeParam domain{eager_config()};
    smr::context<TypeParam> writer{domain};
    const auto a = writer.lent();
    std::atomic<node*> cell{domain.template allocate_outside_op<node>(a, &destroyed)};
    std::atomic<node*> churn{domain.template allocate_outside_op<node>(a, nullptr)};
    for (int op = 0; op < 8; ++op) replace(domain, a, churn);  // the epoch moves on
    {
        smr::context<TypeParam> reader{domain};
        smr::op_guard reading(domain, reader);  // may read X from here on
        replace(domain, a, cell);               // retires X
        for (int op = 0; op < 100; ++op) replace(domain, a, churn);
        EXPECT_FALSE(destroyed) << "freed under a new thread's first operation";
    }
    domain.free_unshared(cell.load(std::memory_order_relaxed));
    domain.free_unshared(churn.load(std::memory_order_relaxed));
}

// The garbage series (the Epochs paper's Figure 4) records each thread's own
// unreclaimed nodes as it begins an epoch, in the schemes whose threads begin
// epochs of their own.
using epoch_beginning_domains = smr::test::gtest_types_of<typename smr::test::domains_where<
    smr::all_domains, [](smr::reclaimer_traits t) { return t.threads_begin_epochs; }>::type>::type;

template <class Domain>
class garbage_series_test : public ::testing::Test {};
TYPED_TEST_SUITE(garbage_series_test, epoch_beginning_domains, domain_names);

// a retires a node in every operation, b none: b's points count no node of
// a's (a sum over threads would), and a's count at most what a retired.
TYPED_TEST(garbage_series_test, each_thread_records_its_own_garbage_as_it_begins_an_epoch) {
    using node = flagged_node<TypeParam>;
    constexpr int steps = 40;
    const smr::domain_config config = eager_config();
    TypeParam domain{config};
    smr::trace::garbage_series series(config.max_threads);
    domain.attach_recorders(nullptr, &series);  // before any thread registers
    int a = 0;
    int b = 0;
    {
        smr::context<TypeParam> first{domain};
        smr::context<TypeParam> second{domain};
        a = first.tid();
        b = second.tid();
        std::atomic<node*> churn{domain.template allocate_outside_op<node>(first, nullptr)};
        for (int step = 0; step < steps; ++step) {
            idle_operation(domain, second);
            replace(domain, first, churn);
        }
        domain.free_unshared(churn.load(std::memory_order_relaxed));
    }
    std::vector<smr::trace::garbage_series::point> of_a;
    std::vector<smr::trace::garbage_series::point> of_b;
    for (const auto& p : series.merged()) {
        ASSERT_TRUE(p.thread == a || p.thread == b) << p.thread;
        (p.thread == a ? of_a : of_b).push_back(p);
    }
    ASSERT_GE(of_a.size(), 5u);
    ASSERT_GE(of_b.size(), 5u);
    std::uint64_t most_of_a = 0;
    for (const auto* points : {&of_a, &of_b}) {
        for (std::size_t i = 1; i < points->size(); ++i) {
            EXPECT_LT((*points)[i - 1].epoch, (*points)[i].epoch)
                << "a thread begins an epoch once";
        }
    }
    for (const auto& p : of_a) most_of_a = std::max(most_of_a, p.garbage);
    for (const auto& p : of_b) EXPECT_EQ(p.garbage, 0u) << "b retired nothing; epoch " << p.epoch;
    EXPECT_GT(most_of_a, 0u);
    EXPECT_LE(most_of_a, std::uint64_t{steps});
}

}  // namespace
