// smrbench's command line: parsed once, validated, into a run_spec.hpp description.
#pragma once

#include "run_spec.hpp"

namespace smrbench {

/// What parse_command_line decided.
struct parse_outcome {
    enum class action { run, exit } what = action::run;
    int exit_code = 0;  // for action::exit: 0 after --help, 2 after an error
    bench_config config;
};

/// Parses and validates argv. Bad input prints one line to stderr and yields
/// action::exit with code 2; nothing has run.
parse_outcome parse_command_line(int argc, char** argv);

}  // namespace smrbench
