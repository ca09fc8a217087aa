// The STAMP applications' inputs for test_smrbench_cli, whose smrbench()
// helper would clash with namespace smrbench in bench/stamp/'s headers.
#include "stamp_inputs.hpp"

#include "stamp/apps.hpp"

std::vector<std::string> stamp_inputs() {
    std::vector<std::string> out;
    for (const auto& app : smrbench::stamp::applications()) {
        for (std::string_view name : app.inputs()) out.emplace_back(name);
    }
    return out;
}
