// Run-time options of the data structures, one struct for all of them (like
// smr::domain_config for the reclaimers): each structure reads the fields it
// documents and has no constructor taking the struct if it reads none.
#pragma once

#include <cstddef>

namespace smr::ds {

struct ds_options {
    /// hm_list (and each bucket of hash_set): after unlinking a marked node,
    /// start the next read phase from the head instead of from the unlinked
    /// node's predecessor (the NBR paper's E4 "restarts" variant). Forced on
    /// with a reclaimer whose traits.needs_restart_from_root is set (NBR,
    /// NBR+).
    bool restart_from_head = false;
    /// hash_set: buckets of its fixed-size table (never resized; at least 1,
    /// the constructor throws std::invalid_argument for 0). smrbench passes
    /// --buckets, by default key_range / 2: load factor 1 at the steady state
    /// of a 50/50 workload, Hart et al.'s setting.
    std::size_t buckets = 1024;
    /// stm_list: the mapping of its STM's ownership-record table (stm_config):
    /// 2^ort_bits versioned locks, each for the stripes of 2^ort_shift bytes
    /// that map to it (TinySTM's defaults, 20 and 5). smrbench passes
    /// --ort-bits and --ort-shift.
    unsigned ort_bits = 20;
    unsigned ort_shift = 5;
};

}  // namespace smr::ds
