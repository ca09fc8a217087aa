// Stress of a concurrently readable hash set of 4 buckets: long buckets, so
// writers contend for each bucket's lock and readers meet removals.
#include "ds_concurrent.hpp"
#include "ds_variants.hpp"

namespace smr::test {
using cr_hash_set_4_buckets_combos = stress_combos<cr_hash_set_4_buckets>;
INSTANTIATE_TYPED_TEST_SUITE_P(cr_hash_set_4_buckets, DsConcurrent, cr_hash_set_4_buckets_combos,
                               combo_names);
}  // namespace smr::test
