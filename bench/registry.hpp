// Every data structure x reclaimer combination compiled into smrbench.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "run_spec.hpp"
#include "smr/compatibility.hpp"
#include "smr/reclaim/traits.hpp"
#include "trial.hpp"

namespace smrbench {

using trial_runner = trial_result (*)(const bench_config&, int trial_index);

struct combination {
    /// What the structure declares (smr::ds_traits_of): its name, the
    /// properties the compatibility rules read, its operations, options and
    /// memory. smrbench asks nothing of a structure that is not here.
    smr::ds_traits structure;
    smr::reclaimer_traits reclaimer;
    trial_runner run;
    /// smr::check for this pair: unsafe ones run only with --allow-unsafe.
    smr::compatibility compat;
    /// --key-range when it is not given (list_default_key_range or
    /// other_default_key_range, below).
    std::int64_t default_key_range = 0;
};

/// The least memory a key of a structure takes: its nodes per key over its
/// keys per node, each node a malloc chunk (8 bytes of header, rounded up to
/// 16). A prefill that cannot fit in memory is refused before it starts.
constexpr std::size_t bytes_per_key(const smr::ds_traits& structure) {
    const std::size_t chunk = (structure.node_size + 8 + 15) / 16 * 16;
    return chunk * structure.nodes_per_key / structure.keys_per_node_at_most;
}

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
/// that is not one: parse_command_line refuses it).
std::int64_t default_key_range_of(std::string_view ds);
bool is_reclaimer_name(std::string_view name);

}  // namespace smrbench
