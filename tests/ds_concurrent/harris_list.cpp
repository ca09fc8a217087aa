// Stress of Harris's list under the reclaimers of ds_concurrent.hpp.
#include "smr/ds/harris_list.hpp"

#include "ds_concurrent.hpp"

namespace smr::test {
using harris_list_combos = stress_combos<smr::ds::harris_list>;
INSTANTIATE_TYPED_TEST_SUITE_P(harris_list, DsConcurrent, harris_list_combos, combo_names);
}  // namespace smr::test
