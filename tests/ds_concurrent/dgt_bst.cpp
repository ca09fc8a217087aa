// Stress of the DGT external BST under the reclaimers of ds_concurrent.hpp.
#include "smr/ds/dgt_bst.hpp"

#include "ds_concurrent.hpp"

namespace smr::test {
using dgt_bst_combos = stress_combos<smr::ds::dgt_bst>;
INSTANTIATE_TYPED_TEST_SUITE_P(dgt_bst, DsConcurrent, dgt_bst_combos, combo_names);
}  // namespace smr::test
