// Faults that only the test build of smrbench can inject (smrbench_faults):
// the tests prove that validation fails when the run is wrong, which a
// validation that always passes would not show. The smrbench that users and
// experiments run is linked with faults.cpp compiled without
// SMRBENCH_FAULTS, so it has no such option.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>

#include "run_spec.hpp"

namespace smrbench {

/// Adds the fault options to the set benchmark's command line (the test
/// build), or nothing.
void add_fault_options(CLI::App& app, bench_config& config);

/// Microseconds each of layout's two-thread turns sleeps (the test build's
/// --inject-turn-delay-us; 0 in smrbench): a layout slow enough to report its
/// progress on any machine, however fast its threads hand turns over.
extern std::uint64_t injected_turn_delay_us;

/// Adds the fault options of `smrbench layout` (the test build), or nothing.
void add_layout_fault_options(CLI::App& layout);

}  // namespace smrbench
