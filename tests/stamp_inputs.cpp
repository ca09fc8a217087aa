// The STAMP applications' inputs for test_smrbench_cli, whose smrbench()
// helper would clash with namespace smrbench in bench/stamp/'s headers.
#include "stamp_inputs.hpp"

#include "stamp/vacation.hpp"

std::vector<std::string> stamp_vacation_inputs() {
    const auto& names = smrbench::stamp::vacation_inputs();
    return {names.begin(), names.end()};
}
