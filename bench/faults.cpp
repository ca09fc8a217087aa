#include "faults.hpp"

namespace smrbench {

#if SMRBENCH_FAULTS
void add_fault_options(CLI::App& app, bench_config& config) {
    app.add_option("--inject-key-sum-error", config.injected_key_sum_error,
                   "test build only: add this to the key sum the threads' updates add up to, "
                   "so that a correct structure fails validation (exit 1, validated: false)")
        ->group("Testing");
}
#else
void add_fault_options(CLI::App&, bench_config&) {}
#endif

}  // namespace smrbench
