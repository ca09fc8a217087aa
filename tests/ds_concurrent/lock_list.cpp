// Stress of lock_list, the spinlock-protected baseline. It runs the same
// code under every scheme (none is ever entered), so it is stressed with
// `none`, its pairing in the experiments, and with debra, to show that a
// scheme's presence changes nothing: every erased node is freed at once.
#include "smr/ds/lock_list.hpp"

#include <gtest/gtest.h>

#include "smr/reclaim/debra.hpp"
#include "smr/reclaim/none.hpp"
#include "stress.hpp"

namespace smr::test {
namespace {

template <class Domain>
void stress_lock_list(std::int64_t key_range, int insert_pct, int erase_pct) {
    stress_options o;
    o.key_range = key_range;
    o.insert_pct = insert_pct;
    o.erase_pct = erase_pct;
    o.ops_per_thread = 60000;
    o.rounds = 3;
    const stress_result r = run_stress<Domain, smr::ds::lock_list>(o);
    EXPECT_TRUE(r.ok()) << r.error;
    EXPECT_TRUE(r.validation.ok) << r.validation.error;
    EXPECT_GT(r.erased, 0u);
    EXPECT_EQ(r.stats.retired, r.erased);
    EXPECT_EQ(r.stats.freed, r.stats.retired) << "freed at once, under any domain";
    EXPECT_EQ(r.stats.garbage, 0u);
}

TEST(lock_list, StressWithNone) {
    stress_lock_list<smr::leak_domain>(32, 50, 50);
    stress_lock_list<smr::leak_domain>(16, 35, 35);
}

TEST(lock_list, StressWithDebraFreesTheSame) { stress_lock_list<smr::debra_domain>(32, 50, 50); }

}  // namespace
}  // namespace smr::test
