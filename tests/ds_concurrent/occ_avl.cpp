// Stress of Bronson's OCC AVL tree under the reclaimers of ds_concurrent.hpp.
#include "smr/ds/occ_avl.hpp"

#include "ds_concurrent.hpp"

namespace smr::test {
using occ_avl_combos = stress_combos<smr::ds::occ_avl>;
INSTANTIATE_TYPED_TEST_SUITE_P(occ_avl, DsConcurrent, occ_avl_combos, combo_names);
}  // namespace smr::test
