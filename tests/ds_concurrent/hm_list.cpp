// Stress of the Harris-Michael list under every reclaimer, in every build: it is safe with all of
// them, so under ThreadSanitizer it is the structure that carries each reclaimer's own
// synchronization (ds_concurrent.hpp).
#include "smr/ds/hm_list.hpp"

#include "ds_concurrent.hpp"

namespace smr::test {
using hm_list_combos = stress_combos<smr::ds::hm_list, true>;
INSTANTIATE_TYPED_TEST_SUITE_P(hm_list, DsConcurrent, hm_list_combos, combo_names);
}  // namespace smr::test
