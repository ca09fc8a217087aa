// Nested op_guards (docs/design.md, "Nested operations"): where a reclaimer
// nests (reclaimer_traits::nests), an inner guard of a thread must not end
// its outer operation; where it does not, a nested guard is refused in debug
// builds.
//
// Deterministic, on one OS thread with two registered slots: a reader opens
// an operation and protects a node; a writer replaces and retires that node
// and keeps running operations, which lets every scheme advance its epochs or
// eras as far as the reader allows; between the writer's operations the
// reader opens and closes an inner guard. Before guards nested, the inner
// guard's end published the reader as quiescent (debra, ebr, token), cleared
// its reservation (rcu) or its interval (ibr), and the node was freed while
// the outer operation still held it.
#include <gtest/gtest.h>

#include <atomic>

#include "one_thread_scenarios.hpp"
#include "smr/reclaim/all.hpp"
#include "smr/reclaim/guards.hpp"

namespace {

using smr::test::domain_names;
using smr::test::eager_config;
using smr::test::flagged_node;
using smr::test::replace;

template <bool Nests>
using domains_nesting = smr::test::gtest_types_of<typename smr::test::domains_where<
    smr::all_domains, [](smr::reclaimer_traits t) { return t.nests == Nests; }>::type>::type;

template <class Domain>
class nesting_test : public ::testing::Test {};
TYPED_TEST_SUITE(nesting_test, domains_nesting<true>, domain_names);

TYPED_TEST(nesting_test, an_inner_guard_keeps_the_outer_operation_protected) {
    using Domain = TypeParam;
    using node = flagged_node<Domain>;
    Domain domain(eager_config());
    smr::context reader(domain);
    smr::context writer(domain);
    const auto r = reader.lent();
    const auto w = writer.lent();
    bool first_destroyed = false;
    std::atomic<node*> cell{domain.template allocate_outside_op<node>(w, &first_destroyed)};
    constexpr int rounds = 200;
    {
        smr::op_guard outer(domain, r);
        SMR_READ_PHASE_BEGIN(domain, r);
        node* held = domain.protect(r, 0, cell);
        ASSERT_NE(held, nullptr);
        for (int round = 0; round < rounds; ++round) {
            { smr::op_guard inner(domain, r); }  // must not end `outer`
            replace(domain, w, cell);
        }
        EXPECT_FALSE(first_destroyed) << "freed while the outer operation held it";
        domain.read_phase_end(r);
    }
    // The outer operation is over: the writer's operations now free it
    // (except under none, which frees nothing while running).
    for (int round = 0; round < rounds && !first_destroyed; ++round) {
        { smr::op_guard op(domain, r); }  // token schemes pass the token on here
        domain.quiescent(r);
        replace(domain, w, cell);
    }
    if (Domain::traits.family != smr::reclaimer_family::leak) {
        EXPECT_TRUE(first_destroyed);
    }
    domain.free_unshared(cell.load(std::memory_order_relaxed));
}

TYPED_TEST(nesting_test, depth_returns_to_zero) {
    TypeParam domain(eager_config());
    smr::context reader(domain);
    {
        smr::op_guard outer(domain, reader);
        {
            smr::op_guard inner(domain, reader);
            EXPECT_EQ(domain.operation_depth(reader.tid()), 2u);
        }
        EXPECT_EQ(domain.operation_depth(reader.tid()), 1u);
    }
    EXPECT_EQ(domain.operation_depth(reader.tid()), 0u);
}

template <class Domain>
class refused_nesting_test : public ::testing::Test {};
TYPED_TEST_SUITE(refused_nesting_test, domains_nesting<false>, domain_names);

// hp, he, wfe and lfrc number their slots from 0 in every operation and nbr
// keeps one checkpoint: a nested guard would overwrite the outer operation's
// protection, so every build stops it (the depth is compared anyway).
TYPED_TEST(refused_nesting_test, a_nested_guard_stops_the_program) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            TypeParam domain(smr::domain_config{});
            smr::context thread(domain);
            smr::op_guard outer(domain, thread);
            smr::op_guard inner(domain, thread);
        },
        "nested op_guard");
}

}  // namespace
