// Linearizability of the hash sets, the transactional structures and the
// queue (lincheck_runs/suite.hpp).
#include "lincheck_runs/suite.hpp"
#include "smr/ds/cr_hash_set.hpp"
#include "smr/ds/hash_set.hpp"
#include "smr/ds/ms_queue.hpp"
#include "smr/ds/stm_hash_set.hpp"
#include "smr/ds/stm_list.hpp"
#include "smr/ds/stm_rbtree.hpp"

namespace smr::test {
INSTANTIATE_TYPED_TEST_SUITE_P(hash_set, Linearizable, lincheck_combos<smr::ds::hash_set>,
                               lincheck_combo_names);
INSTANTIATE_TYPED_TEST_SUITE_P(cr_hash_set, Linearizable, lincheck_combos<smr::ds::cr_hash_set>,
                               lincheck_combo_names);
INSTANTIATE_TYPED_TEST_SUITE_P(stm_hash_set, Linearizable, lincheck_combos<smr::ds::stm_hash_set>,
                               lincheck_combo_names);
INSTANTIATE_TYPED_TEST_SUITE_P(stm_list, Linearizable, lincheck_combos<smr::ds::stm_list>,
                               lincheck_combo_names);
INSTANTIATE_TYPED_TEST_SUITE_P(stm_rbtree, Linearizable, lincheck_combos<smr::ds::stm_rbtree>,
                               lincheck_combo_names);
INSTANTIATE_TYPED_TEST_SUITE_P(ms_queue, Linearizable, lincheck_combos<smr::ds::ms_queue>,
                               lincheck_combo_names);
}  // namespace smr::test
