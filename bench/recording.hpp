// Writing timelines and garbage series (docs/timeline-format.md).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "smr/trace/timeline.hpp"

namespace smrbench {

/// `run.timeline` -> `run.t1.timeline` when a run has several trials.
std::string per_trial_path(const std::string& path, int trial, int trials);

/// Times in the file are ns relative to `start_ticks` (the measured start).
/// Written to a temporary file and renamed, so a reader never sees half a
/// file. Throws std::runtime_error with a one-line message on I/O failure.
void write_timeline(const std::string& path, nlohmann::json header,
                    const smr::trace::timeline& timeline, std::uint64_t start_ticks,
                    std::uint64_t end_ticks, double ns_per_tick);

void write_garbage_series(const std::string& path, nlohmann::json header,
                          const smr::trace::garbage_series& series, std::uint64_t start_ticks,
                          double ns_per_tick);

}  // namespace smrbench
