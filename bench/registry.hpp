// Every data structure x reclaimer combination compiled into smrbench.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "options.hpp"
#include "smr/compatibility.hpp"
#include "smr/reclaim/traits.hpp"
#include "trial.hpp"

namespace smrbench {

using trial_runner = trial_result (*)(const bench_config&, int trial_index);

struct combination {
    std::string_view ds;
    smr::reclaimer_traits reclaimer;
    trial_runner run;
    /// smr::check for this pair: unsafe ones run only with --allow-unsafe.
    smr::compatibility compat;
    /// The structure reads smr::ds::ds_options::restart_from_head.
    bool has_restart_from_head_option = false;
    /// A FIFO queue (DS::is_queue): insert enqueues, erase dequeues, and
    /// there is no contains.
    bool is_queue = false;
    /// The structure reads smr::ds::ds_options::buckets (--buckets).
    bool has_buckets_option = false;
    /// The structure can hold its first node for a stalled reader
    /// (hold_first; --stall-hold).
    bool has_hold_first = false;
    /// At least this many bytes of nodes per key the structure holds (one
    /// node per key unless it declares otherwise): a prefill that cannot fit
    /// in memory is refused before it starts.
    std::size_t bytes_per_key = 0;
    /// The structure runs on the STM (smr::ds_traits::transactional): it
    /// reads --ort-bits and --ort-shift and reports the `stm` statistics.
    bool transactional = false;
};

/// Each data structure's translation unit (ds_*.cpp) contributes its list.
std::vector<combination> lazylist_combinations();
std::vector<combination> dgt_bst_combinations();
std::vector<combination> harris_list_combinations();
std::vector<combination> hm_list_combinations();
std::vector<combination> abtree_combinations();
std::vector<combination> occ_avl_combinations();
std::vector<combination> ms_queue_combinations();
std::vector<combination> hash_set_combinations();
std::vector<combination> cr_list_combinations();
std::vector<combination> cr_hash_set_combinations();
std::vector<combination> lock_list_combinations();
std::vector<combination> stm_list_combinations();
std::vector<combination> stm_hash_set_combinations();
std::vector<combination> stm_rbtree_combinations();

/// All combinations, in a stable order (data structure, then reclaimer).
const std::vector<combination>& combinations();
const combination* find_combination(std::string_view ds, std::string_view reclaimer);
std::vector<std::string_view> ds_names();
std::vector<smr::reclaimer_traits> reclaimers();
bool is_ds_name(std::string_view name);
bool is_reclaimer_name(std::string_view name);

}  // namespace smrbench
