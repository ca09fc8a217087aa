// Stress of stm_hash_set, the transactional hash set of the allocator/STM
// study, under every reclaimer that can serve the STM: with its default
// table (a bucket per test key) and with 4 buckets (long chains, so erases
// unlink from the middle of a chain and searches walk through nodes that a
// concurrent commit frees).
#include "smr/ds/stm_hash_set.hpp"

#include "ds_concurrent.hpp"
#include "ds_concurrent/transactional.hpp"
#include "ds_variants.hpp"

namespace smr::test {
using stm_hash_set_combos = stress_combos<smr::ds::stm_hash_set>;
INSTANTIATE_TYPED_TEST_SUITE_P(stm_hash_set, DsConcurrent, stm_hash_set_combos, combo_names);
using stm_hash_set_4_buckets_combos = stress_combos<stm_hash_set_4_buckets>;
INSTANTIATE_TYPED_TEST_SUITE_P(stm_hash_set_4_buckets, DsConcurrent, stm_hash_set_4_buckets_combos,
                               combo_names);

namespace {

TEST(stm_hash_set, ConflictsRetryToTheRightAnswerDebra) {
    conflicts_retry_to_the_right_answer<smr::debra_domain, smr::ds::stm_hash_set>();
}
TEST(stm_hash_set, ConflictsRetryToTheRightAnswerWithOneBucket) {
    conflicts_retry_to_the_right_answer<smr::rcu_epoch_domain, stm_hash_set_1_bucket>();
}

}  // namespace
}  // namespace smr::test
