// Linearizability of the trees (lincheck_runs/suite.hpp).
#include "lincheck_runs/suite.hpp"
#include "smr/ds/abtree.hpp"
#include "smr/ds/dgt_bst.hpp"
#include "smr/ds/occ_avl.hpp"

namespace smr::test {
INSTANTIATE_TYPED_TEST_SUITE_P(abtree, Linearizable, lincheck_combos<smr::ds::abtree>,
                               lincheck_combo_names);
INSTANTIATE_TYPED_TEST_SUITE_P(dgt_bst, Linearizable, lincheck_combos<smr::ds::dgt_bst>,
                               lincheck_combo_names);
INSTANTIATE_TYPED_TEST_SUITE_P(occ_avl, Linearizable, lincheck_combos<smr::ds::occ_avl>,
                               lincheck_combo_names);
}  // namespace smr::test
