// Stress of lazylist (Heller et al.) under the reclaimers of ds_concurrent.hpp.
#include "smr/ds/lazylist.hpp"

#include "ds_concurrent.hpp"

namespace smr::test {
using lazylist_combos = stress_combos<smr::ds::lazylist>;
INSTANTIATE_TYPED_TEST_SUITE_P(lazylist, DsConcurrent, lazylist_combos, combo_names);
}  // namespace smr::test
