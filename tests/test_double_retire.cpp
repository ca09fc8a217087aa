// A node retired twice stops the program at the second retire
// (core/retire_check.hpp), under every scheme and through both C++26
// facades, instead of a double free inside a later free loop or, under RCU,
// a list that links an object to itself and a barrier that never returns.
//
// This binary turns the check on (SMR_CHECK_RETIRE=1): it is on by default
// in debug builds, off under the sanitizers the other test binaries run
// with. rcu_obj_base's own check, in every build, is tested in
// test_rcu_facade. A death test that missed would hang or crash in the
// child; the test's timeout ends a hang.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "one_thread_scenarios.hpp"
#include "smr/hazard_pointer.hpp"
#include "smr/rcu.hpp"
#include "smr/reclaim/all.hpp"
#include "smr/reclaim/guards.hpp"

static_assert(SMR_CHECK_RETIRE == 1, "this binary tests the debug-build check");

namespace {

using smr::test::domain_names;
using smr::test::flagged_node;

using retiring_domains = smr::test::gtest_types_of<
    typename smr::test::domains_where<smr::all_domains, [](smr::reclaimer_traits t) {
        // lfrc asserts it itself (a retire of a node the caller does not hold).
        return t.family != smr::reclaimer_family::reference_count;
    }>::type>::type;

template <class Domain>
class double_retire : public ::testing::Test {};
TYPED_TEST_SUITE(double_retire, retiring_domains, domain_names);

constexpr const char* message = "retired twice";

/// The schemes' own thresholds: the first retire does not free the node
/// before the second (a retire of a node already freed is a use after free,
/// which the set cannot tell from a new node at the same address).
smr::domain_config config() {
    smr::domain_config out;
    out.max_threads = 4;
    return out;
}

template <class Domain>
void retire_twice() {
    Domain domain(config());
    smr::context self(domain);
    auto* node = domain.template allocate_outside_op<flagged_node<Domain>>(self, nullptr);
    {
        smr::op_guard op(domain, self);
        domain.retire(self, node);
        domain.retire(self, node);
    }
}

TYPED_TEST(double_retire, stops_at_the_second_retire) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(retire_twice<TypeParam>(), message);
}

// A node freed may come back at the same address and be retired again.
TYPED_TEST(double_retire, a_freed_node_may_be_retired_again) {
    using Domain = TypeParam;
    if (Domain::traits.family == smr::reclaimer_family::leak) GTEST_SKIP() << "frees nothing";
    Domain domain(config());
    smr::context self(domain);
    auto* node = domain.template allocate_outside_op<flagged_node<Domain>>(self, nullptr);
    const void* address = static_cast<const smr::core::retired_node*>(node);
    {
        smr::op_guard op(domain, self);
        domain.retire(self, node);
    }
    domain.barrier(self);              // frees it: the set forgets the address
    smr::core::note_retired(address);  // as a retire of a node made there would
    smr::core::note_freed(address);
}

struct hp_node : smr::hazard_pointer_obj_base<hp_node> {
    int value = 0;
};

TEST(double_retire_facades, hazard_pointer_obj_base) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            auto* n = new hp_node;
            n->retire();
            n->retire();
        },
        message);
}

TEST(double_retire_facades, rcu_obj_base_in_every_build) {
    struct object : smr::rcu_obj_base<object> {};
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            auto* o = new object;
            o->retire();
            o->retire();
            smr::rcu_barrier();  // hung for ever before: o linked to itself
        },
        "retired twice");
}

TEST(double_retire_facades, rcu_retire_of_any_type) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            auto* p = new int(7);
            smr::rcu_retire(p);
            smr::rcu_retire(p);
        },
        message);
}

TEST(double_retire_facades, rcu_retire_again_after_the_deleter_ran) {
    int* p = new int(7);
    smr::rcu_retire(p, [](int*) {});  // a deleter that keeps the object
    smr::rcu_barrier();
    smr::rcu_retire(p);
    smr::rcu_barrier();
}

}  // namespace
