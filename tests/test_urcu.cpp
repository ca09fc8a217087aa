// The liburcu peers (urcu_qsbr, urcu_memb): stress both sets with both free
// policies (a node freed before its grace period is a heap-use-after-free
// under AddressSanitizer; LeakSanitizer checks that rcu_barrier in the
// domain's destructor leaves nothing behind), a reader stalled inside a
// read-side critical section pins every later node, and going offline
// (qsbr) releases it. Not run under ThreadSanitizer: liburcu is not
// instrumented, so TSan cannot see its grace-period ordering.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#include "smr/ds/dgt_bst.hpp"
#include "smr/ds/lazylist.hpp"
#include "smr/reclaim/guards.hpp"
#include "smr/reclaim/urcu.hpp"
#include "stress.hpp"

namespace {

using namespace std::chrono_literals;

template <class Domain>
class Urcu : public ::testing::Test {};

using flavours = ::testing::Types<smr::urcu_qsbr_domain, smr::urcu_memb_domain>;

struct flavour_names {
    template <class D>
    static std::string GetName(int) {
        return std::string(D::traits.name);
    }
};

TYPED_TEST_SUITE(Urcu, flavours, flavour_names);

smr::test::stress_options stress(smr::free_mode mode) {
    smr::test::stress_options o;
    o.key_range = 32;
    o.ops_per_thread = 40000;
    o.rounds = 3;
    o.cfg.free.mode = mode;
    return o;
}

template <class D, template <class...> class DS>
void expect_stress_ok(smr::free_mode mode) {
    const smr::test::stress_result r = smr::test::run_stress<D, DS>(stress(mode));
    EXPECT_TRUE(r.ok()) << r.error;
    EXPECT_GT(r.stats.retired, 1000u);
    // Grace periods elapsed and nodes came back to their threads and were
    // freed while the threads ran.
    EXPECT_GT(r.stats.freed, 0u);
    EXPECT_EQ(r.stats.freed + r.stats.garbage, r.stats.retired);
}

TYPED_TEST(Urcu, LazylistBatch) {
    expect_stress_ok<TypeParam, smr::ds::lazylist>(smr::free_mode::batch);
}
TYPED_TEST(Urcu, LazylistAmortized) {
    expect_stress_ok<TypeParam, smr::ds::lazylist>(smr::free_mode::amortized);
}
TYPED_TEST(Urcu, DgtBstBatch) {
    expect_stress_ok<TypeParam, smr::ds::dgt_bst>(smr::free_mode::batch);
}
TYPED_TEST(Urcu, DgtBstAmortized) {
    expect_stress_ok<TypeParam, smr::ds::dgt_bst>(smr::free_mode::amortized);
}

template <class D>
struct test_node final : D::node_base {
    std::uint64_t payload = 0;
};

/// Retires `count` nodes from a worker thread (which announces quiescent
/// states between operations) and then waits up to 5 s, still operating, for
/// them to be freed. Returns the garbage left.
template <class D>
std::uint64_t retire_and_wait(D& domain, int count) {
    std::uint64_t left = 0;
    std::thread worker([&] {
        smr::context handle(domain);
        const auto self = handle.lent();
        for (int i = 0; i < count; ++i) {
            smr::op_guard guard(domain, self);
            domain.retire(self, domain.template allocate<test_node<D>>(self));
        }
        const auto deadline = std::chrono::steady_clock::now() + 5s;
        while (domain.garbage() != 0 && std::chrono::steady_clock::now() < deadline) {
            { smr::op_guard guard(domain, self); }  // returned nodes are freed here
            domain.quiescent(self);
            std::this_thread::sleep_for(1ms);
        }
        left = domain.garbage();
    });
    worker.join();
    return left;
}

TYPED_TEST(Urcu, StalledReaderPinsGarbageUntilItLeaves) {
    smr::domain_config cfg;
    TypeParam domain(cfg);
    {
        // A reader inside a read-side critical section (qsbr: online and
        // announcing no quiescent state) for the whole retire phase.
        smr::context staller(domain);
        domain.begin_op(staller);
        std::thread probe([&] {
            smr::context handle(domain);
            const auto self = handle.lent();
            for (int i = 0; i < 200; ++i) {
                smr::op_guard guard(domain, self);
                domain.retire(self, domain.template allocate<test_node<TypeParam>>(self));
            }
            domain.quiescent(self);
        });
        probe.join();
        std::this_thread::sleep_for(100ms);  // ample time for a grace period, were one possible
        EXPECT_EQ(domain.garbage(), 200u) << "a grace period ended under a stalled reader";
        domain.end_op(staller);
        domain.thread_offline(staller);
        // The staller has left its critical section (and, for qsbr, gone
        // offline): grace periods resume and the nodes come back. The probe's
        // slot is free, so the next worker takes it and frees them.
        EXPECT_EQ(retire_and_wait(domain, 100), 0u);
        domain.thread_online(staller);
    }
    EXPECT_EQ(domain.stats().freed, 300u);
}

}  // namespace
