// Stress of stm_list, the transactional list of the allocator/STM study,
// under every reclaimer that can serve the STM (the epoch family, none, and
// liburcu): erased nodes are freed through the STM's pointer blocks while
// doomed transactions may still read them, so a free that came too early is
// a use-after-free under ASan and a missing happens-before under TSan.
#include "smr/ds/stm_list.hpp"

#include "ds_concurrent.hpp"

namespace smr::test {
using stm_list_combos = stress_combos<smr::ds::stm_list>;
INSTANTIATE_TYPED_TEST_SUITE_P(stm_list, DsConcurrent, stm_list_combos, combo_names);
}  // namespace smr::test

namespace smr::test {
namespace {

// Four keys and twice as many threads as cores: nearly every update meets
// another's lock or finds its snapshot overtaken. Every operation is still
// exactly one committed transaction (aborted attempts are retried, never
// counted), and the answers add up (run_stress's key sum and size).
template <class Domain>
void conflicts_retry_to_the_right_answer() {
    stress_options o;
    o.key_range = 4;
    o.insert_pct = 40;
    o.erase_pct = 40;
    o.ops_per_thread = 40000;
    o.rounds = 2;
    const stress_result r = run_stress<Domain, smr::ds::stm_list>(o);
    ASSERT_TRUE(r.ok()) << r.error;
    ASSERT_TRUE(r.stm.has_value());
    EXPECT_EQ(r.stm->commits, r.operations);
    EXPECT_GT(r.stm->aborts, 0u) << "no conflict in " << r.operations << " operations";
    EXPECT_EQ(r.stm->aborts, r.stm->aborts_validation + r.stm->aborts_write_locked +
                                 r.stm->aborts_read_locked + r.stm->aborts_explicit);
    EXPECT_LE(r.stm->false_aborts, r.stm->aborts_write_locked + r.stm->aborts_read_locked);
    // Every erased node went into a pointer block, every block was retired
    // (flushed at each thread's exit), and at most the last grace period's
    // blocks are still unfreed.
    EXPECT_EQ(r.stats.retired, r.stats.allocated - r.stats.discarded);
    EXPECT_GE(r.stats.retired * smr::stm::stm<Domain>::pointers_per_block, r.erased);
}

TEST(stm_list, ConflictsRetryToTheRightAnswerDebra) {
    conflicts_retry_to_the_right_answer<smr::debra_domain>();
}
TEST(stm_list, ConflictsRetryToTheRightAnswerQsbr) {
    conflicts_retry_to_the_right_answer<smr::qsbr_domain>();
}

}  // namespace
}  // namespace smr::test
