// Every data structure x reclaimer combination compiled into smrbench.
#pragma once

#include <cstdint>
#include <optional>
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
    /// sizeof the structure's node under this reclaimer, with the header the
    /// reclaimer's node_base adds (every structure has one node type).
    std::size_t node_bytes = 0;
    /// The structure runs on the STM (smr::ds_traits::transactional): it
    /// reads --ort-bits and --ort-shift and reports the `stm` statistics.
    bool transactional = false;
    /// --key-range when it is not given (list_default_key_range or
    /// other_default_key_range, below).
    std::int64_t default_key_range = 0;
};

/// --key-range's default: a run a newcomer can wait for. Every operation of a
/// list walks half of it, and its prefill is quadratic: at the trees' 200,000
/// keys, hm_list's prefill alone took 262 s (and ran 221 operations a second);
/// the papers' list runs use 1,000 to 20,000 keys. Trees, skip structures and
/// hash sets take the larger range, which their logarithmic or constant
/// searches cross in microseconds.
inline constexpr std::int64_t list_default_key_range = 10'000;
inline constexpr std::int64_t other_default_key_range = 200'000;

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
/// The traits of reclaimer `name`; none for a name that is not one.
std::optional<smr::reclaimer_traits> reclaimer_named(std::string_view name);
bool is_ds_name(std::string_view name);
/// --key-range's default for structure `ds` (other_default_key_range for a name
/// that is not one: check_names refuses it).
std::int64_t default_key_range_of(std::string_view ds);
bool is_reclaimer_name(std::string_view name);

}  // namespace smrbench
