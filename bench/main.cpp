// smrbench: one binary, any data structure x reclaimer x allocator x workload.
#include <exception>
#include <iostream>
#include <new>
#include <vector>

#include "allocator.hpp"
#include "layout.hpp"
#include "machine.hpp"
#include "options.hpp"
#include "output_file.hpp"
#include "registry.hpp"
#include "report.hpp"
#include "smr/core/clock.hpp"
#include "stamp.hpp"
#include "threadtest.hpp"

namespace {

constexpr int exit_ok = 0;
constexpr int exit_validation_failed = 1;
constexpr int exit_bad_input = 2;

/// Runs config.trials trials of `run` (each a trial result with `validated`
/// and `validation_error`), reporting each on stderr unless quiet; then
/// `print`s them. `what` names the trials ("trial", "threadtest trial");
/// `rate` gives a trial's speed per second, in millions of `unit`.
template <class Trial, class Run, class Rate, class Print>
int run_trials(const smrbench::bench_config& config, const char* what, const char* unit, Run run,
               Rate rate, Print print) {
    std::vector<Trial> trials;
    try {
        for (int i = 0; i < config.trials; ++i) {
            trials.push_back(run(i));
            const Trial& t = trials.back();
            if (!config.output.quiet) {
                std::cerr << "smrbench: " << what << ' ' << i + 1 << '/' << config.trials << ": "
                          << rate(t) / 1e6 << ' ' << unit << ", "
                          << (t.validated ? "validated"
                                          : "VALIDATION FAILED: " + t.validation_error)
                          << '\n';
            }
        }
    } catch (const std::exception& e) {
        // The threads a trial started are stopped and joined (thread_group.hpp).
        const bool out_of_memory = dynamic_cast<const std::bad_alloc*>(&e) != nullptr;
        std::cerr << "smrbench: error: " << what << ' ' << trials.size() + 1
                  << " failed: " << (out_of_memory ? "out of memory" : e.what()) << '\n';
        return exit_validation_failed;
    }
    print(trials);
    for (const auto& t : trials) {
        if (!t.validated) return exit_validation_failed;
    }
    return exit_ok;
}

/// `smrbench threadtest`: its trials, then the JSON or the table.
int run_threadtest_command(const smrbench::bench_config& config,
                           const smrbench::allocator_identity& allocator) {
    using namespace smrbench;
    return run_trials<threadtest_trial>(
        config, "threadtest trial", "M pairs/s", [&](int i) { return run_threadtest(config, i); },
        [](const threadtest_trial& t) { return t.pairs_per_s; },
        [&](const std::vector<threadtest_trial>& trials) {
            if (config.output.json) {
                std::cout << threadtest_to_json(config, allocator, trials).dump() << '\n';
            } else {
                print_threadtest_human(std::cout, config, allocator, trials);
            }
        });
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
    if (config.output.json) {
        std::cout << layout.dump() << '\n';
    } else {
        print_layout_human(std::cout, layout);
    }
    return layout["validated"].get<bool>() ? exit_ok : exit_validation_failed;
}

/// `smrbench stamp`: its trials (a trial's rate is tasks per second), then
/// the JSON or the table.
int run_stamp_command(const smrbench::bench_config& config,
                      const smrbench::allocator_identity& allocator) {
    using namespace smrbench;
    return run_trials<stamp_trial>(
        config, "stamp trial", "M tasks/s", [&](int i) { return run_stamp(config, i); },
        [](const stamp_trial& t) { return t.tasks_per_s(); },
        [&](const std::vector<stamp_trial>& trials) {
            if (config.output.json) {
                std::cout << stamp_to_json(config, allocator, trials).dump() << '\n';
            } else {
                print_stamp_human(std::cout, config, allocator, trials);
            }
        });
}

/// Everything but the check of standard output, which main does on every path.
int run(int argc, char** argv) {
    using namespace smrbench;
    const parse_outcome parsed = parse_command_line(argc, argv);
    if (parsed.what == parse_outcome::action::exit) return parsed.exit_code;
    bench_config config = parsed.config;
    if (config.output.check_only) return exit_ok;  // every check passed; run nothing
    if (config.output.list) {
        if (config.output.markdown) {
            print_compatibility_markdown(std::cout);
        } else {
            print_list(std::cout, config.output.json);
        }
        return exit_ok;
    }

    allocator_identity allocator;
    try {
        reexec_with_allocator_if_needed(config.alloc, argc, argv);  // returns only when done
        allocator = identify_malloc();
        verify_allocator(config.alloc, allocator);
        config.allocator = allocator;
        (void)this_machine_json();  // the machine as the run begins (its load average)
        // Before the prefill and the workers, which inherit it.
        config.numa_result = apply_numa_policy(config.numa);
    } catch (const std::exception& e) {
        std::cerr << "smrbench: error: " << e.what() << '\n';
        return exit_bad_input;
    }

    if (config.command == bench_command::threadtest) {
        return run_threadtest_command(config, allocator);
    }
    if (config.command == bench_command::layout) return run_layout_command(config, allocator);
    if (config.command == bench_command::stamp) return run_stamp_command(config, allocator);

    const combination& combo = *config.combo;  // resolved by parse_command_line
    smr::core::ns_per_tick();  // calibrate the free-latency clock outside measured time

    return run_trials<trial_result>(
        config, "trial", "Mops/s", [&](int i) { return combo.run(config, i); },
        [](const trial_result& t) { return t.throughput_ops_per_s; },
        [&](const std::vector<trial_result>& trials) {
            if (config.output.json) {
                std::cout << run_to_json(config, combo, allocator, trials).dump() << '\n';
            } else {
                print_human(std::cout, config, combo, allocator, trials);
            }
        });
}

}  // namespace

int main(int argc, char** argv) {
    smrbench::install_output_signal_handlers();  // before any output file exists
    return smrbench::finish_standard_output(run(argc, argv));
}
