// smrbench's reported statistics, described once: the table generates the
// "reclaimer" object of every trial's JSON and (smrbench --list --json) the
// "statistics" array that names every reported figure with its unit.
#pragma once

#include <nlohmann/json.hpp>

#include "trial.hpp"

namespace smrbench {

/// A trial's reclaimer counters as JSON, one member per row of the table.
nlohmann::json reclaimer_json(const reclaimer_report& report);

/// smrbench --list --json's "statistics": every reported figure's object
/// (run, trial, reclaimer, pool), JSON key ('/' for nested members), unit
/// and meaning.
nlohmann::json statistics_description();

}  // namespace smrbench
