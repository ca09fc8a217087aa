// Stress of Bronson's OCC AVL tree under the reclaimers of ds_concurrent.hpp.
#include "smr/ds/occ_avl.hpp"

#include "ds_concurrent.hpp"

namespace smr::test {
using occ_avl_combos = stress_combos<smr::ds::occ_avl>;
INSTANTIATE_TYPED_TEST_SUITE_P(occ_avl, DsConcurrent, occ_avl_combos, combo_names);

// Many short rounds in which every thread stops as soon as one is done, as in
// smrbench's timed runs: whatever a repair race leaves behind is validated
// before a lone straggler could repair it. Between rounds validate()
// (structure, keys) must hold and the key sum and size must match what the
// threads' own updates add up to (run_stress). Exact heights and balance
// (validate_balance()) are not asserted here (occ_avl.hpp, "Balance is
// relaxed"); measured with this setup and the leak domain, they failed in 10
// of 10 runs with the authors' repair, 7 of 10 with the lock confirmation
// alone, 3 of 10 with child-following in the height path, and 0 of 30 with it
// in the rebalance path too. One reclaimer per family the tree accepts, with
// more threads than cores.
template <class Domain>
void short_rounds_stopping_together() {
    stress_options o;
    o.threads = 4;
    o.key_range = 64;
    // Rounds of a thousand operations per thread. The repair race needs many
    // (the measurements above are of 1,000 rounds, under ASan);
    // ThreadSanitizer judges the tree's synchronization, which every round
    // exercises alike, at several times ASan's cost per operation: 1,000
    // rounds took 42 of the TSan stage's 391 test-seconds.
    o.rounds = thread_sanitizer_build ? 250 : 1000;
    o.ops_per_thread = 1000 * static_cast<std::uint64_t>(o.rounds);
    o.stop_together = true;
    o.cfg.bag_threshold = 64;  // scan-based schemes free often
    const stress_result r = run_stress<Domain, smr::ds::occ_avl>(o);
    ASSERT_TRUE(r.ok()) << r.error;
    EXPECT_TRUE(r.validation.ok) << r.validation.error;
    EXPECT_EQ(static_cast<std::int64_t>(r.validation.size), r.expected_size);
    EXPECT_LT(r.operations, 4u * o.ops_per_thread);  // the rounds did stop together
    EXPECT_GT(r.inserted, 1000u);
    EXPECT_GT(r.erased, 1000u);
    if constexpr (Domain::traits.family != reclaimer_family::leak) {
        EXPECT_GT(r.stats.retired, 1000u);
        // Reclamation kept up: at most half of what was retired is still held.
        EXPECT_GE(r.stats.freed, r.stats.retired / 2) << r.stats.retired << " retired";
    }
}

TEST(OccAvlConcurrent, ShortRoundsStoppingTogetherEpoch) {
    short_rounds_stopping_together<smr::debra_domain>();
}
TEST(OccAvlConcurrent, ShortRoundsStoppingTogetherNeutralization) {
    short_rounds_stopping_together<smr::nbrplus_domain>();
}
TEST(OccAvlConcurrent, ShortRoundsStoppingTogetherLeak) {
    short_rounds_stopping_together<smr::leak_domain>();
}
}  // namespace smr::test
