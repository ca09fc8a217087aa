// smrbench's output: one JSON object (--json) or a human-readable table.
#pragma once

#include <iosfwd>
#include <nlohmann/json.hpp>
#include <vector>

#include "allocator.hpp"
#include "registry.hpp"
#include "run_spec.hpp"
#include "trial.hpp"

namespace smrbench {

/// Every option of the run, as in the JSON's "config".
nlohmann::json config_json(const bench_config& config);

/// The header fields every recording file shares (config, allocator, trial).
nlohmann::json recording_header(const bench_config& config, int trial);

/// The run's summary: every option, the allocator really in use, the median
/// trial's figures and every trial. docs/smrbench.md documents each field.
nlohmann::json run_to_json(const bench_config& config, const combination& combo,
                           const allocator_identity& allocator,
                           const std::vector<trial_result>& trials);

void print_human(std::ostream& out, const bench_config& config, const combination& combo,
                 const allocator_identity& allocator, const std::vector<trial_result>& trials);

/// --list: names and valid combinations, as text or (with --json) JSON.
void print_list(std::ostream& out, bool json);

/// --list --markdown: the reclaimer x data structure compatibility table with
/// its numbered reasons, between BEGIN/END comment lines; docs/compatibility.md
/// holds exactly this text (tests/test_compatibility.cpp checks it).
void print_compatibility_markdown(std::ostream& out);

/// Index of the trial whose throughput is the median (lower median).
std::size_t median_trial(const std::vector<trial_result>& trials);

}  // namespace smrbench
