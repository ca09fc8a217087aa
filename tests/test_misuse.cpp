// Rules of the domain API that every build checks, where a check costs
// nothing per operation (docs/library.md, "Rules"): each misuse stops the
// program with one line instead of undefined behaviour at -O2. The checks on
// an operation's own path (an unregistered context inside op_guard) are debug
// assertions, and are tested where the assertions are compiled in.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>

#include "one_thread_scenarios.hpp"
#include "smr/alloc/pool_resource.hpp"
#include "smr/reclaim/all.hpp"
#include "smr/reclaim/guards.hpp"

namespace {

using smr::test::domain_names;
using smr::test::flagged_node;

template <class Domain>
class misuse : public ::testing::Test {};
// Every scheme, the signal ones too: every misuse below happens on one thread.
TYPED_TEST_SUITE(misuse, smr::test::gtest_types_of<smr::all_domains>::type, domain_names);

smr::domain_config small() {
    smr::domain_config config;
    config.max_threads = 4;
    return config;
}

TYPED_TEST(misuse, a_tid_never_registered) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    const char* message = "not a registered thread";
    EXPECT_DEATH(
        {
            TypeParam domain(small());
            domain.unregister_thread(2);
        },
        message);
    EXPECT_DEATH(
        {
            TypeParam domain(small());
            domain.barrier(typename TypeParam::lent{7});  // beyond max_threads, too
        },
        message);
    EXPECT_DEATH(
        {
            TypeParam domain(small());
            domain.thread_offline(typename TypeParam::lent{-1});
        },
        message);
}

#ifndef NDEBUG
TYPED_TEST(misuse, an_operation_of_a_tid_never_registered_fails_a_debug_assertion) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            TypeParam domain(small());
            smr::op_guard op(domain, typename TypeParam::lent{1});
        },
        "not a registered thread");
}
#endif

TYPED_TEST(misuse, a_domain_destroyed_while_a_thread_is_registered) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            auto domain = std::make_unique<TypeParam>(small());
            (void)domain->register_thread();
            domain.reset();
        },
        "still attached");
}

TYPED_TEST(misuse, a_barrier_inside_an_operation) {
    if constexpr (TypeParam::traits.family == smr::reclaimer_family::leak) {
        GTEST_SKIP() << "none's barrier frees nothing";
    } else {
        GTEST_FLAG_SET(death_test_style, "threadsafe");
        EXPECT_DEATH(
            {
                TypeParam domain(small());
                smr::context self(domain);
                smr::op_guard op(domain, self);
                domain.barrier(self);
            },
            "inside an operation");
    }
}

TYPED_TEST(misuse, correct_use_passes_every_check) {
    TypeParam domain(small());
    {
        smr::context self(domain);
        {
            smr::op_guard op(domain, self);
            std::atomic<flagged_node<TypeParam>*> cell{nullptr};
            (void)domain.protect(self, smr::max_protect_slots - 1, cell);
        }
        domain.thread_offline(self);
        domain.thread_online(self);
        domain.barrier(self);
    }
    // Every thread gone: the domain may go.
}

smr::alloc::pool_options pool_options() {
    smr::alloc::pool_options options;
    options.capacity = 4096;
    return options;
}

// A pool destroyed before the domain that allocates from it: the domain's
// destructor would free its nodes into memory already given back.
TEST(misuse_pool, a_pool_destroyed_before_its_domain) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            auto pool = std::make_unique<smr::alloc::pool_resource>(pool_options());
            smr::domain_config config = small();
            config.memory = pool.get();
            smr::debra_domain domain(config);
            pool.reset();
        },
        "pool_resource destroyed while a domain still allocates from it");
}

TEST(misuse_pool, a_pool_outliving_its_domain_is_fine) {
    smr::alloc::pool_resource pool(pool_options());
    for (int round = 0; round < 3; ++round) {
        smr::domain_config config = small();
        config.memory = &pool;
        smr::debra_domain first(config);
        smr::hp_domain second(config);  // two domains on one pool
        smr::context self(first);
        smr::op_guard op(first, self);
        first.retire(self, first.template allocate<flagged_node<smr::debra_domain>>(self, nullptr));
    }
}

}  // namespace
