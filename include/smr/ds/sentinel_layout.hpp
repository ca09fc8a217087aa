// Where a list keeps its head and tail sentinels (hm_list, cr_list): padded
// for a list that stands alone, packed for the buckets of a hash table.
#pragma once

#include <cstddef>

#include "smr/core/padded.hpp"

namespace smr::ds {

/// Where a list puts its two sentinels: each alone on its own cache lines
/// (the default: a list is one object, head is written by every update at the
/// front), or packed at their natural alignment (the buckets of hash_set and cr_hash_set: 384
/// bytes of padding per bucket would dwarf the one node a bucket holds at
/// load factor 1). The strictest alignas applies, so packed's 1 leaves a
/// sentinel at its natural alignment.
struct padded_sentinels {
    static constexpr std::size_t alignment = core::false_sharing_range;
};
struct packed_sentinels {
    static constexpr std::size_t alignment = 1;
};

}  // namespace smr::ds
