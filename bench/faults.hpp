// Faults that only the test build of smrbench can inject (smrbench_faults):
// the tests prove that validation fails when the run is wrong, which a
// validation that always passes would not show. The smrbench that users and
// experiments run is linked with faults.cpp compiled without
// SMRBENCH_FAULTS, so it has no such option.
#pragma once

#include <CLI/CLI.hpp>

#include "options.hpp"

namespace smrbench {

/// Adds the fault options to the set benchmark's command line (the test
/// build), or nothing.
void add_fault_options(CLI::App& app, bench_config& config);

}  // namespace smrbench
