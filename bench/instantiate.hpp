// Instantiates run_trial for one data structure with every reclaimer.
// Included once per data structure (ds_*.cpp), so the builds run in parallel.
#pragma once

#include <tuple>
#include <vector>

#include "registry.hpp"
#include "runner.hpp"
#include "smr/reclaim/measured.hpp"

namespace smrbench {

/// The trial of one pair; null when the pair cannot be built (smr::buildable).
template <class Domain, template <class> class Structure>
constexpr trial_runner runner_for() {
    if constexpr (smr::buildable<Structure<Domain>, Domain>()) {
        return &run_trial<Domain, Structure>;
    } else {
        return nullptr;
    }
}

template <template <class> class Structure, class... Domains>
std::vector<combination> combinations_over(std::tuple<Domains...>*, std::int64_t key_range) {
    return {combination{smr::ds_traits_of<Structure<Domains>>(), Domains::traits,
                        runner_for<Domains, Structure>(), smr::check<Structure<Domains>, Domains>(),
                        key_range}...};
}

/// Every pair of Structure with a reclaimer; `key_range` is the structure's
/// --key-range default (registry.hpp).
template <template <class> class Structure>
std::vector<combination> combinations_for(std::int64_t key_range = other_default_key_range) {
    return combinations_over<Structure>(static_cast<smr::measured_domains*>(nullptr), key_range);
}

}  // namespace smrbench
