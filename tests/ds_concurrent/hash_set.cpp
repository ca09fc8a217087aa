// Stress of the hash set (Harris-Michael buckets), default bucket count: most keys get a bucket of
// their own.
#include "smr/ds/hash_set.hpp"

#include "ds_concurrent.hpp"

namespace smr::test {
using hash_set_combos = stress_combos<smr::ds::hash_set>;
INSTANTIATE_TYPED_TEST_SUITE_P(hash_set, DsConcurrent, hash_set_combos, combo_names);
}  // namespace smr::test
