// Instantiates run_trial for one data structure with every reclaimer.
// Included once per data structure (ds_*.cpp), so the builds run in parallel.
#pragma once

#include <tuple>
#include <vector>

#include "registry.hpp"
#include "runner.hpp"
#include "smr/reclaim/measured.hpp"

namespace smrbench {

template <class DS>
constexpr bool has_restart_from_head_option() {
    if constexpr (requires { DS::has_restart_from_head_option; }) {
        return DS::has_restart_from_head_option;
    } else {
        return false;
    }
}

template <class DS>
constexpr bool has_buckets_option() {
    if constexpr (requires { DS::has_buckets_option; }) {
        return DS::has_buckets_option;
    } else {
        return false;
    }
}

/// The trial of one pair; null when the pair cannot be built (smr::buildable).
template <class Domain, template <class> class Structure>
constexpr trial_runner runner_for() {
    if constexpr (smr::buildable<Structure<Domain>, Domain>()) {
        return &run_trial<Domain, Structure>;
    } else {
        return nullptr;
    }
}

/// The least memory a key of DS takes: its nodes per key (one unless
/// DS::nodes_per_key) over its keys per node (one unless
/// DS::keys_per_node_at_most), each node a malloc chunk (8 bytes of header,
/// rounded up to 16).
template <class DS>
constexpr std::size_t bytes_per_key() {
    std::size_t nodes = 1, keys = 1;
    if constexpr (requires { DS::nodes_per_key; }) nodes = DS::nodes_per_key;
    if constexpr (requires { DS::keys_per_node_at_most; }) keys = DS::keys_per_node_at_most;
    const std::size_t chunk = (DS::node_size + 8 + 15) / 16 * 16;
    return chunk * nodes / keys;
}

template <template <class> class Structure, class... Domains>
std::vector<combination> combinations_over(std::tuple<Domains...>*, std::int64_t key_range) {
    return {combination{
        Structure<Domains>::name, Domains::traits, runner_for<Domains, Structure>(),
        smr::check<Structure<Domains>, Domains>(),
        has_restart_from_head_option<Structure<Domains>>(), detail::is_queue<Structure<Domains>>(),
        has_buckets_option<Structure<Domains>>(), detail::has_hold_first<Structure<Domains>>(),
        bytes_per_key<Structure<Domains>>(), Structure<Domains>::node_size,
        smr::ds_traits_of<Structure<Domains>>().transactional, key_range}...};
}

/// Every pair of Structure with a reclaimer; `key_range` is the structure's
/// --key-range default (registry.hpp).
template <template <class> class Structure>
std::vector<combination> combinations_for(std::int64_t key_range = other_default_key_range) {
    return combinations_over<Structure>(static_cast<smr::measured_domains*>(nullptr), key_range);
}

}  // namespace smrbench
