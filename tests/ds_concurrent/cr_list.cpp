// Stress of cr_list (concurrently readable: locked writers, lock-free
// readers) under the reclaimers of ds_concurrent.hpp. Under a reservation
// scheme its readers validate and restart (Hart et al.'s Listing 3), under
// the others they walk through removed nodes (Listing 2): both paths run.
#include "smr/ds/cr_list.hpp"

#include "ds_concurrent.hpp"

namespace smr::test {
using cr_list_combos = stress_combos<smr::ds::cr_list>;
INSTANTIATE_TYPED_TEST_SUITE_P(cr_list, DsConcurrent, cr_list_combos, combo_names);
}  // namespace smr::test

namespace smr::test {
namespace {

// Hazard pointers that scan at every retire (R = 1): a removed node is freed
// as soon as no hazard names it, so a reader that walked out of a removed
// node without noticing its mark (Listing 3's validation) touches freed
// memory within a few thousand operations, and ASan reports it. The suite's
// default R (at least 128 retires between scans) leaves that window open
// only rarely.
TEST(cr_list, HazardPointersScanningAtEveryRetire) {
    stress_options o;
    o.key_range = 8;
    o.insert_pct = 25;
    o.erase_pct = 25;
    o.ops_per_thread = 400000;
    o.rounds = 4;
    o.cfg.bag_threshold = 1;
    o.cfg.hp_scan_factor = 0;
    const stress_result r = run_stress<smr::hp_domain, smr::ds::cr_list>(o);
    EXPECT_TRUE(r.ok()) << r.error;
    EXPECT_TRUE(r.validation.ok) << r.validation.error;
    EXPECT_GT(r.found, 0u);
    EXPECT_GT(r.stats.freed, r.stats.retired / 2) << "most nodes freed at once";
}

}  // namespace
}  // namespace smr::test
