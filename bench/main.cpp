// smrbench: one binary, any data structure x reclaimer x allocator x workload.
#include <exception>
#include <iostream>
#include <vector>

#include "allocator.hpp"
#include "layout.hpp"
#include "options.hpp"
#include "registry.hpp"
#include "report.hpp"
#include "smr/core/clock.hpp"
#include "threadtest.hpp"

namespace {

constexpr int exit_ok = 0;
constexpr int exit_validation_failed = 1;
constexpr int exit_bad_input = 2;

/// `smrbench threadtest`: its trials, then the JSON or the table.
int run_threadtest_command(const smrbench::bench_config& config,
                           const smrbench::allocator_identity& allocator) {
    using namespace smrbench;
    std::vector<threadtest_trial> trials;
    try {
        for (int i = 0; i < config.trials; ++i) {
            trials.push_back(run_threadtest(config, i));
            const threadtest_trial& t = trials.back();
            if (!config.quiet) {
                std::cerr << "smrbench: threadtest trial " << i + 1 << '/' << config.trials << ": "
                          << t.pairs_per_s / 1e6 << " M pairs/s, "
                          << (t.validated ? "validated"
                                          : "VALIDATION FAILED: " + t.validation_error)
                          << '\n';
            }
        }
    } catch (const std::exception& e) {
        std::cerr << "smrbench: error: threadtest trial " << trials.size() + 1
                  << " failed: " << e.what() << '\n';
        return exit_validation_failed;
    }
    if (config.json) {
        std::cout << threadtest_to_json(config, allocator, trials).dump() << '\n';
    } else {
        print_threadtest_human(std::cout, config, allocator, trials);
    }
    for (const auto& t : trials) {
        if (!t.validated) return exit_validation_failed;
    }
    return exit_ok;
}

/// `smrbench layout`: one measurement, then the JSON or the summary.
int run_layout_command(const smrbench::bench_config& config,
                       const smrbench::allocator_identity& allocator) {
    using namespace smrbench;
    nlohmann::json layout;
    try {
        layout = measure_layout(config, allocator);
    } catch (const std::exception& e) {
        std::cerr << "smrbench: error: layout failed: " << e.what() << '\n';
        return exit_validation_failed;
    }
    if (config.json) {
        std::cout << layout.dump() << '\n';
    } else {
        print_layout_human(std::cout, layout);
    }
    return layout["validated"].get<bool>() ? exit_ok : exit_validation_failed;
}

}  // namespace

int main(int argc, char** argv) {
    using namespace smrbench;
    const parse_outcome parsed = parse_command_line(argc, argv);
    if (parsed.what == parse_outcome::action::exit) return parsed.exit_code;
    bench_config config = parsed.config;
    if (config.list) {
        if (config.markdown) {
            print_compatibility_markdown(std::cout);
        } else {
            print_list(std::cout, config.json);
        }
        return exit_ok;
    }

    allocator_identity allocator;
    try {
        reexec_with_allocator_if_needed(config.alloc, argc, argv);  // returns only when done
        allocator = identify_malloc();
        verify_allocator(config.alloc, allocator);
        config.allocator = allocator;
    } catch (const std::exception& e) {
        std::cerr << "smrbench: error: " << e.what() << '\n';
        return exit_bad_input;
    }

    if (config.command == bench_command::threadtest) {
        return run_threadtest_command(config, allocator);
    }
    if (config.command == bench_command::layout) return run_layout_command(config, allocator);

    const combination& combo = *find_combination(config.ds, config.reclaimer);
    smr::core::ns_per_tick();  // calibrate the free-latency clock outside measured time

    std::vector<trial_result> trials;
    try {
        for (int i = 0; i < config.trials; ++i) {
            trials.push_back(combo.run(config, i));
            const trial_result& t = trials.back();
            if (!config.quiet) {
                std::cerr << "smrbench: trial " << i + 1 << '/' << config.trials << ": "
                          << t.throughput_ops_per_s / 1e6 << " Mops/s, "
                          << (t.validated ? "validated"
                                          : "VALIDATION FAILED: " + t.validation_error)
                          << '\n';
            }
        }
    } catch (const std::exception& e) {
        std::cerr << "smrbench: error: trial " << trials.size() + 1 << " failed: " << e.what()
                  << '\n';
        return exit_validation_failed;
    }

    if (config.json) {
        std::cout << run_to_json(config, combo, allocator, trials).dump() << '\n';
    } else {
        print_human(std::cout, config, combo, allocator, trials);
    }
    for (const auto& t : trials) {
        if (!t.validated) return exit_validation_failed;
    }
    return exit_ok;
}
