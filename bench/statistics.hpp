// smrbench's reported statistics, described once: the table generates each
// trial's figures, its "reclaimer", "pool" and "stm" objects in the JSON and (smrbench --list
// --json) the "statistics" array that names every reported figure with its unit.
#pragma once

#include <nlohmann/json.hpp>

#include "trial.hpp"

namespace smrbench {

/// A trial's figures as JSON, one member per row of the table: the trial's
/// own, its reclaimer's counters, its pool's.
nlohmann::json trial_statistics_json(const trial_result& trial);
nlohmann::json reclaimer_json(const trial_result& trial);
nlohmann::json pool_statistics_json(const trial_result& trial);
/// The allocator's counters over the trial (jemalloc); null for an allocator
/// without them.
nlohmann::json allocator_counters_json(const trial_result& trial);
/// Null for a structure without an STM.
nlohmann::json stm_statistics_json(const trial_result& trial);

/// smrbench --list --json's "statistics": every reported figure's object
/// (run, trial, reclaimer, pool, stm, allocator), JSON key ('/' for nested members), unit
/// and meaning.
nlohmann::json statistics_description();

}  // namespace smrbench
