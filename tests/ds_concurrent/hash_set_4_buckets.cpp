// Stress of a hash set of 4 buckets: long buckets, so updates collide inside them.
#include "ds_concurrent.hpp"
#include "ds_variants.hpp"

namespace smr::test {
using hash_set_4_buckets_combos = stress_combos<hash_set_4_buckets>;
INSTANTIATE_TYPED_TEST_SUITE_P(hash_set_4_buckets, DsConcurrent, hash_set_4_buckets_combos,
                               combo_names);
}  // namespace smr::test
