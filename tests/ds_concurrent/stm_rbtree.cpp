// Stress of stm_rbtree, the transactional red-black tree of the allocator/STM
// study, under every reclaimer that can serve the STM: rotations rewrite the
// parent, child and colour words of several nodes per update, and an erase
// of a node with two children copies its successor's key into it, so a
// snapshot that mixed two commits would break the order or the colours that
// validate() checks after every round.
#include "smr/ds/stm_rbtree.hpp"

#include "ds_concurrent.hpp"
#include "ds_concurrent/transactional.hpp"

namespace smr::test {
using stm_rbtree_combos = stress_combos<smr::ds::stm_rbtree>;
INSTANTIATE_TYPED_TEST_SUITE_P(stm_rbtree, DsConcurrent, stm_rbtree_combos, combo_names);

namespace {

TEST(stm_rbtree, ConflictsRetryToTheRightAnswerDebra) {
    conflicts_retry_to_the_right_answer<smr::debra_domain, smr::ds::stm_rbtree>();
}

// A larger range: trees several levels deep, so rebalancing rotates near the
// root while other transactions walk through.
TEST(stm_rbtree, DeepTreesStayBalancedUnderConcurrentUpdates) {
    stress_options o;
    o.key_range = 2048;
    o.insert_pct = 50;
    o.erase_pct = 50;
    o.ops_per_thread = 40000;
    o.rounds = 3;
    const stress_result r = run_stress<smr::debra_domain, smr::ds::stm_rbtree>(o);
    ASSERT_TRUE(r.ok()) << r.error;
    EXPECT_GT(r.validation.size, 500u);
    EXPECT_EQ(r.stm->commits, r.operations);
}

}  // namespace
}  // namespace smr::test
