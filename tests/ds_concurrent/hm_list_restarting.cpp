// Stress of the Harris-Michael list that restarts from the head (the NBR paper's E4 variant).
#include "ds_concurrent.hpp"
#include "ds_variants.hpp"

namespace smr::test {
using hm_list_restarting_combos = stress_combos<hm_list_restarting>;
INSTANTIATE_TYPED_TEST_SUITE_P(hm_list_restarting, DsConcurrent, hm_list_restarting_combos,
                               combo_names);
}  // namespace smr::test
