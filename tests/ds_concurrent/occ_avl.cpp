// Stress of Bronson's OCC AVL tree under the reclaimers of ds_concurrent.hpp.
#include "smr/ds/occ_avl.hpp"

#include "ds_concurrent.hpp"

namespace smr::test {
using occ_avl_combos = stress_combos<smr::ds::occ_avl>;
INSTANTIATE_TYPED_TEST_SUITE_P(occ_avl, DsConcurrent, occ_avl_combos, combo_names);

// Many short rounds in which every thread stops as soon as one is done, as in
// smrbench's timed runs: whatever a repair race leaves behind is validated
// before a lone straggler could repair it. validate() (structure, keys) must
// hold. Exact heights and balance (validate_balance()) are not asserted here
// (occ_avl.hpp, "Balance is relaxed"); measured with this setup and the leak
// domain, they failed in 10 of 10 runs with the authors' repair, 7 of 10 with
// the lock confirmation alone, 3 of 10 with child-following in the height
// path, and 0 of 30 with it in the rebalance path too.
TEST(OccAvlConcurrent, ShortRoundsStoppingTogether) {
    stress_options o;
    o.threads = 2;
    o.key_range = 64;
    o.rounds = 2000;
    o.ops_per_thread = 2000 * 1000;
    o.stop_together = true;
    const stress_result r = run_stress<smr::debra_domain, smr::ds::occ_avl>(o);
    EXPECT_TRUE(r.ok()) << r.error;
    EXPECT_TRUE(r.validation.ok) << r.validation.error;
    EXPECT_LT(r.operations, 2u * o.ops_per_thread);  // the rounds did stop together
}
}  // namespace smr::test
