// Linearizability of the linked lists (lincheck_runs/suite.hpp).
#include "lincheck_runs/suite.hpp"
#include "smr/ds/cr_list.hpp"
#include "smr/ds/harris_list.hpp"
#include "smr/ds/hm_list.hpp"
#include "smr/ds/lazylist.hpp"
#include "smr/ds/lock_list.hpp"

namespace smr::test {
INSTANTIATE_TYPED_TEST_SUITE_P(lazylist, Linearizable, lincheck_combos<smr::ds::lazylist>,
                               lincheck_combo_names);
INSTANTIATE_TYPED_TEST_SUITE_P(harris_list, Linearizable, lincheck_combos<smr::ds::harris_list>,
                               lincheck_combo_names);
INSTANTIATE_TYPED_TEST_SUITE_P(hm_list, Linearizable, lincheck_combos<smr::ds::hm_list>,
                               lincheck_combo_names);
INSTANTIATE_TYPED_TEST_SUITE_P(lock_list, Linearizable, lincheck_combos<smr::ds::lock_list>,
                               lincheck_combo_names);
INSTANTIATE_TYPED_TEST_SUITE_P(cr_list, Linearizable, lincheck_combos<smr::ds::cr_list>,
                               lincheck_combo_names);
}  // namespace smr::test
