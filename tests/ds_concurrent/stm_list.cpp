// Stress of stm_list, the transactional list of the allocator/STM study,
// under every reclaimer that can serve the STM (the epoch family, none, and
// liburcu): erased nodes are freed through the STM's pointer blocks while
// doomed transactions may still read them, so a free that came too early is
// a use-after-free under ASan and a missing happens-before under TSan.
#include "smr/ds/stm_list.hpp"

#include "ds_concurrent.hpp"
#include "ds_concurrent/transactional.hpp"

namespace smr::test {
using stm_list_combos = stress_combos<smr::ds::stm_list>;
INSTANTIATE_TYPED_TEST_SUITE_P(stm_list, DsConcurrent, stm_list_combos, combo_names);

namespace {

TEST(stm_list, ConflictsRetryToTheRightAnswerDebra) {
    conflicts_retry_to_the_right_answer<smr::debra_domain, smr::ds::stm_list>();
}
TEST(stm_list, ConflictsRetryToTheRightAnswerQsbr) {
    conflicts_retry_to_the_right_answer<smr::qsbr_domain, smr::ds::stm_list>();
}

}  // namespace
}  // namespace smr::test
