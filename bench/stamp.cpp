#include "stamp.hpp"

#include <algorithm>
#include <ostream>
#include <utility>

#include "median.hpp"
#include "option_table.hpp"
#include "process_stats.hpp"
#include "stamp/apps.hpp"
#include "statistics.hpp"
#include "trial.hpp"

namespace smrbench {
namespace {

std::size_t median_trial(const std::vector<stamp_trial>& trials) {
    return median_index(trials, [](const stamp_trial& t) { return t.seconds; });
}

/// The STM's counts as the set benchmark's "stm" object gives them.
nlohmann::json stm_json(const smr::stm::stm_stats& stats) {
    trial_result t;
    t.has_stm = true;
    t.stm = stats;
    return stm_statistics_json(t);
}

}  // namespace

stamp_trial run_stamp(const bench_config& config, int trial) {
    reset_peak_rss();
    const stamp::app_run run =
        stamp::application_of(config.app)
            .run(config.app, config.threads,
                 smr::stm::stm_config{.ort_bits = config.ort_bits, .shift = config.ort_shift});
    stamp_trial out;
    out.trial = trial;
    out.seconds = run.seconds;
    out.tasks = static_cast<std::uint64_t>(run.tasks);
    out.stm = run.stm;
    out.peak_rss_bytes = peak_rss_bytes();
    out.validated = run.validation.ok;
    out.validation_error = run.validation.error;
    return out;
}

nlohmann::json stamp_to_json(const bench_config& config, const allocator_identity& allocator,
                             const std::vector<stamp_trial>& trials) {
    using nlohmann::json;
    const auto summary = summarize(trials, [](const stamp_trial& t) { return t.seconds; });
    const stamp_trial& median = *summary.median;
    json trial_list = json::array();
    for (const stamp_trial& t : trials) {
        trial_list.push_back({{"trial", t.trial},
                              {"seconds", t.seconds},
                              {"tasks", t.tasks},
                              {"stm", stm_json(t.stm)},
                              {"peak_rss_bytes", t.peak_rss_bytes},
                              {"validated", t.validated},
                              {"validation", {{"error", t.validation_error}}}});
    }
    json out = subcommand_json(config, allocator);
    out.update(json{
        {"app", config.app},
        {"application", stamp::application_of(config.app).name},
        {"input", stamp::application_of(config.app).parameters(config.app, config.threads)},
        {"seconds", median.seconds},
        {"seconds_min", summary.low},
        {"seconds_max", summary.high},
        // The set benchmark's name for a rate: a task is an operation.
        {"throughput_ops_per_s", median.tasks_per_s()},
        {"stm", stm_json(median.stm)},
    });
    out.update(subcommand_trials_json(summary.validated, summary.peak_rss_bytes, median.trial,
                                      std::move(trial_list)));
    return out;
}

void print_stamp_human(std::ostream& out, const bench_config& config,
                       const allocator_identity& allocator,
                       const std::vector<stamp_trial>& trials) {
    const stamp_trial& median = trials[median_trial(trials)];
    out << "stamp       " << config.app << ", " << config.threads << " clients, " << allocator.name
        << ' ' << allocator.version << '\n'
        << "median      " << median.seconds << " s for " << median.tasks << " tasks ("
        << trials.size() << (trials.size() == 1 ? " trial" : " trials") << ")\n";
    for (const stamp_trial& t : trials) {
        out << "trial " << t.trial + 1 << "     " << t.seconds << " s, " << t.stm.commits
            << " commits, " << t.stm.aborts << " aborts (" << t.stm.false_aborts << " false), "
            << (t.validated ? "verified" : "VERIFICATION FAILED: " + t.validation_error) << '\n';
    }
}

}  // namespace smrbench
