// Stress of Brown's relaxed (a,b)-tree under the reclaimers of ds_concurrent.hpp.
#include "smr/ds/abtree.hpp"

#include "ds_concurrent.hpp"

namespace smr::test {
using abtree_combos = stress_combos<smr::ds::abtree>;
INSTANTIATE_TYPED_TEST_SUITE_P(abtree, DsConcurrent, abtree_combos, combo_names);
}  // namespace smr::test
