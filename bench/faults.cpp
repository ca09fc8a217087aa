#include "faults.hpp"

namespace smrbench {

std::uint64_t injected_turn_delay_us = 0;

#if SMRBENCH_FAULTS
void add_fault_options(CLI::App& app, bench_config& config) {
    app.add_option("--inject-key-sum-error", config.injected_key_sum_error,
                   "test build only: add this to the key sum the threads' updates add up to, "
                   "so that a correct structure fails validation (exit 1, validated: false)")
        ->group("Testing");
}
void add_layout_fault_options(CLI::App& layout) {
    layout
        .add_option("--inject-turn-delay-us", injected_turn_delay_us,
                    "test build only: each two-thread turn sleeps this long first")
        ->group("Testing");
}
#else
void add_fault_options(CLI::App&, bench_config&) {}
void add_layout_fault_options(CLI::App&) {}
#endif

}  // namespace smrbench
