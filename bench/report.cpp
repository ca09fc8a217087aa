#include "report.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <ostream>
#include <string>
#include <thread>

#include "build_info.hpp"
#include "machine.hpp"
#include "median.hpp"
#include "option_table.hpp"
#include "pinning.hpp"
#include "smr/free_policy.hpp"
#include "statistics.hpp"

namespace smrbench {
namespace {

using nlohmann::json;

}  // namespace

json config_json(const bench_config& c) {
    json out = table_config_json(c);
    // Derived from the options, for readers of the JSON.
    out["contains"] = c.workload.contains_pct();
    out["prefill_target"] = c.workload.prefill_target();
    return out;
}

json recording_header(const bench_config& c, int trial) {
    return json{{"config", config_json(c)},
                {"allocator", {{"name", c.allocator.name}, {"version", c.allocator.version}}},
                {"trial", trial}};
}

namespace {

/// The pool's counts, or null for a run without a pool (capacity null: the
/// unbounded pool reference counting runs on without --pool-nodes).
json pool_json(const bench_config& c, const trial_result& t) {
    if (!t.has_pool) return nullptr;
    json out = pool_statistics_json(t);
    out["on_empty"] = std::string(smr::alloc::to_string(c.on_empty));
    return out;
}

json samples_json(const std::vector<memory_sample>& samples) {
    json out = json::array();
    for (const auto& s : samples) {
        out.push_back(
            {{"time_ms", s.time_ms},
             {"rss_bytes", s.rss_bytes},
             {"allocator_bytes", s.allocator_bytes < 0 ? json(nullptr) : json(s.allocator_bytes)},
             {"garbage", s.garbage}});
    }
    return out;
}

json trial_json(const bench_config& c, const trial_result& t) {
    json out = trial_statistics_json(t);
    out["trial"] = t.trial;
    out["status"] = t.status;
    out["pool"] = pool_json(c, t);
    out["allocator_counters"] = allocator_counters_json(t);
    out["validated"] = t.validated;
    out["validation"] = {{"error", t.validation_error},
                         {"key_sum", t.key_sum},
                         {"expected_key_sum", t.expected_key_sum},
                         {"size", t.size},
                         {"expected_size", t.expected_size}};
    out["reclaimer"] = reclaimer_json(t);
    out["stm"] = stm_statistics_json(t);
    out["samples"] = samples_json(t.samples);
    return out;
}

std::string human_count(double value) {
    char buffer[32];
    if (value >= 1e9) {
        std::snprintf(buffer, sizeof buffer, "%.2fG", value / 1e9);
    } else if (value >= 1e6) {
        std::snprintf(buffer, sizeof buffer, "%.2fM", value / 1e6);
    } else if (value >= 1e3) {
        std::snprintf(buffer, sizeof buffer, "%.1fk", value / 1e3);
    } else {
        std::snprintf(buffer, sizeof buffer, "%.0f", value);
    }
    return buffer;
}

std::string human_ns(std::uint64_t ns) {
    char buffer[32];
    if (ns >= 1000000) {
        std::snprintf(buffer, sizeof buffer, "%.2f ms", static_cast<double>(ns) / 1e6);
    } else if (ns >= 1000) {
        std::snprintf(buffer, sizeof buffer, "%.1f us", static_cast<double>(ns) / 1e3);
    } else {
        std::snprintf(buffer, sizeof buffer, "%llu ns", static_cast<unsigned long long>(ns));
    }
    return buffer;
}

}  // namespace

std::size_t median_trial(const std::vector<trial_result>& trials) {
    return median_index(trials, [](const trial_result& t) { return t.throughput_ops_per_s; });
}

json run_to_json(const bench_config& config, const combination& combo,
                 const allocator_identity& allocator, const std::vector<trial_result>& trials) {
    const trial_result& median = trials[median_trial(trials)];
    // The CPUs this process may run on (its affinity mask), which taskset or
    // a container may make fewer than the machine's.
    const int cpus = static_cast<int>(allowed_cpus().size());
    std::vector<double> throughputs;
    std::uint64_t peak_rss = 0;
    bool all_validated = true;
    std::string status = "ok";  // the first trial's that is not ok
    json trial_list = json::array();
    for (const auto& t : trials) {
        throughputs.push_back(t.throughput_ops_per_s);
        peak_rss = std::max(peak_rss, t.peak_rss_bytes);
        all_validated = all_validated && t.validated;
        if (status == "ok") status = t.status;
        trial_list.push_back(trial_json(config, t));
    }
    const auto [min_it, max_it] = std::minmax_element(throughputs.begin(), throughputs.end());

    json reclaimer = reclaimer_json(median);
    reclaimer["name"] = std::string(combo.reclaimer.name);
    reclaimer["family"] = std::string(smr::to_string(combo.reclaimer.family));
    reclaimer["garbage_bounded"] = combo.reclaimer.garbage_bounded;
    reclaimer["safe_with_ds"] = combo.compat.safe;  // false only under --allow-unsafe
    reclaimer["fence"] = nullptr;                   // a scheme without a reader's fence
    if (combo.reclaimer.reads.fence) {
        const smr::fence_mode used = smr::core::effective_fence(config.domain.fence);
        reclaimer["fence"] = std::string(smr::to_string(used));
        if (used != config.domain.fence) {
            reclaimer["fence_note"] =
                "asymmetric fences asked, but this process cannot use membarrier's private "
                "expedited command: the run used symmetric fences";
        }
    }

    return json{
        {"smrbench_version", 1},
        {"config", config_json(config)},
        {"allocator",
         {{"name", allocator.name},
          {"version", allocator.version},
          {"library", allocator.library},
          {"pool", pool_json(config, median)},
          {"counters", allocator_counters_json(median)}}},
        {"machine", this_machine_json()},
        {"build", build_json()},
        {"numa", numa_json(config.numa_result)},
        {"placement", placement_json(config.pin, config.threads)},
        {"throughput_ops_per_s", median.throughput_ops_per_s},
        {"exec_time_per_op_ns", median.exec_time_per_op_ns},
        {"cpu_time_per_op_ns", median.cpu_time_per_op_ns},
        {"cpus_used", std::min(config.threads, cpus)},
        {"throughput_min_ops_per_s", *min_it},
        {"throughput_max_ops_per_s", *max_it},
        {"status", status},
        {"failed_operations", median.failed_operations},
        {"validated", all_validated},
        {"peak_rss_bytes", peak_rss},
        {"median_trial", median.trial},
        {"reclaimer", reclaimer},
        {"stm", stm_statistics_json(median)},
        {"trials", trial_list},
    };
}

void print_human(std::ostream& out, const bench_config& config, const combination& combo,
                 const allocator_identity& allocator, const std::vector<trial_result>& trials) {
    out << "smrbench  " << config.ds << " x " << combo.reclaimer.name << " ("
        << smr::to_string(config.domain.free.mode) << " free) x " << allocator.name << ' '
        << allocator.version << '\n'
        << "workload  " << config.threads << " threads, keys [0, " << config.workload.key_range
        << "), " << config.workload.insert_pct << "% insert " << config.workload.erase_pct
        << "% erase " << config.workload.contains_pct() << "% contains"
        << (config.workload.alternate ? " (alternating)" : "") << ", ";
    if (config.ops_per_thread != 0) {
        out << config.ops_per_thread << " operations per thread";
    } else {
        out << config.duration_s << " s";
    }
    out << (config.workload.stall_hold ? ", one stalled thread holding the first node"
            : config.workload.stall    ? ", one stalled thread"
                                       : "")
        << '\n';
    if (config.numa != numa_policy::none) {
        const numa_outcome& numa = config.numa_result;
        out << "numa      " << to_string(numa.policy) << " over " << numa.nodes << " node"
            << (numa.nodes == 1 ? "" : "s") << (numa.note.empty() ? "" : " (" + numa.note + ")")
            << '\n';
    }
    if (!combo.compat.safe) {  // run only with --allow-unsafe
        out << "UNSAFE    " << combo.reclaimer.name << " is unsafe with " << config.ds << ": "
            << combo.compat.reason << " (--allow-unsafe): a run may read freed memory\n";
    }
    if (config.pool_nodes != 0) {
        out << "pool      " << config.pool_nodes << " blocks on " << allocator.name
            << ", on empty: " << smr::alloc::to_string(config.on_empty) << '\n';
    } else if (!trials.empty() && trials.front().has_pool) {
        out << "pool      unbounded, type-stable (reference counting needs it), on "
            << allocator.name << '\n';
    }
    out << '\n';
    char line[256];
    std::snprintf(line, sizeof line, "%-6s %12s %10s %10s %10s %10s %10s %10s %9s\n", "trial",
                  "ops/s", "retired", "freed", "garb.peak", "epochs", "free p99.9", "free max",
                  "valid");
    out << line;
    for (const auto& t : trials) {
        const auto& r = t.reclaimer;
        std::snprintf(line, sizeof line, "%-6d %12s %10s %10s %10s %10s %10s %10s %9s\n",
                      t.trial + 1, human_count(t.throughput_ops_per_s).c_str(),
                      human_count(double(r.totals.retired)).c_str(),
                      human_count(double(r.totals.freed)).c_str(),
                      human_count(double(r.totals.garbage_peak)).c_str(),
                      human_count(double(r.totals.epochs)).c_str(),
                      human_ns(r.totals.free_latency.percentile(0.999)).c_str(),
                      human_ns(r.totals.free_latency.max_ns()).c_str(), t.validated ? "yes" : "NO");
        out << line;
        if (!t.validated) out << "       validation failed: " << t.validation_error << '\n';
        if (t.allocator_counts) {
            const allocator_counters& a = *t.allocator_counts;
            std::snprintf(line, sizeof line,
                          "       %s: %s thread-cache flushes, %s bin locks (%s waited, %s)\n",
                          allocator.name.c_str(), human_count(double(a.tcache_flushes)).c_str(),
                          human_count(double(a.bin_lock_acquisitions)).c_str(),
                          human_count(double(a.bin_lock_waits)).c_str(),
                          human_ns(a.bin_lock_wait_ns).c_str());
            out << line;
        }
        if (r.remote_frees_counted && r.totals.freed != 0) {
            std::snprintf(line, sizeof line, "       remote frees: %s (%.1f %% of freed)\n",
                          human_count(double(r.totals.remote_frees)).c_str(),
                          100.0 * double(r.totals.remote_frees) / double(r.totals.freed));
            out << line;
        }
        if (const auto& rounds = r.totals.publish_latency; rounds.count() != 0) {
            std::snprintf(line, sizeof line,
                          "       ping rounds: %s, %s signals, publication p50 %s, p99 %s, max "
                          "%s\n",
                          human_count(double(rounds.count())).c_str(),
                          human_count(double(r.totals.signals)).c_str(),
                          human_ns(rounds.percentile(0.5)).c_str(),
                          human_ns(rounds.percentile(0.99)).c_str(),
                          human_ns(rounds.max_ns()).c_str());
            out << line;
        }
        if (t.has_stm) {
            const smr::stm::stm_stats& x = t.stm;
            out << "       stm: " << x.commits << " commits, " << x.aborts << " aborts ("
                << x.aborts_validation << " validation, " << x.aborts_write_locked
                << " write locked, " << x.aborts_read_locked << " read locked), " << x.false_aborts
                << " false (" << x.false_aborts_lock_meet << " met a lock, "
                << x.false_aborts_validation << " at validation; " << x.false_aborts_collision
                << " table collisions)\n";
        }
        if (config.pool_nodes != 0) {
            const smr::alloc::pool_stats& p = t.pool;
            out << "       " << t.status << ": pool peak " << p.in_use_peak << '/' << p.capacity
                << ", " << p.failures << " found it empty, " << p.gave_up << " gave up ("
                << t.failed_operations << " operations), " << p.wait_seconds << " s waiting\n";
        }
    }
    const trial_result& median = trials[median_trial(trials)];
    out << "\nmedian    " << human_count(median.throughput_ops_per_s) << " ops/s, peak RSS "
        << human_count(double(median.peak_rss_bytes)) << "B, time in free "
        << median.reclaimer.totals.free_seconds << " s\n";
}

void print_list(std::ostream& out, bool as_json) {
    if (as_json) {
        json reclaimer_list = json::array();
        for (const auto& r : reclaimers()) {
            reclaimer_list.push_back({{"name", std::string(r.name)},
                                      {"family", std::string(smr::to_string(r.family))},
                                      {"garbage_bounded", r.garbage_bounded},
                                      {"uses_signals", r.uses_signals},
                                      {"pings", r.pings},
                                      {"needs_restart_from_root", r.needs_restart_from_root}});
        }
        json combos = json::array();
        for (const auto& c : combinations()) {
            // "valid": smrbench runs it without --allow-unsafe.
            combos.push_back({{"ds", std::string(c.structure.name)},
                              {"reclaimer", std::string(c.reclaimer.name)},
                              {"valid", c.compat.safe},
                              {"safe", c.compat.safe},
                              {"reason", std::string(c.compat.reason)},
                              {"restart_from_head_option", c.structure.restart_from_head_option},
                              {"node_bytes", c.structure.node_size}});
        }
        json allocators = json::array();
        for (auto name : allocator_names()) {
            const auto kind = *parse_allocator(name);
            allocators.push_back(
                {{"name", std::string(name)},
                 {"available", kind == allocator_kind::glibc || (allocator_selection_supported() &&
                                                                 find_allocator_library(kind))}});
        }
        json ds_list = json::array();
        json key_ranges = json::object();
        for (auto name : ds_names()) {
            ds_list.push_back(std::string(name));
            key_ranges[std::string(name)] = default_key_range_of(name);
        }
        out << json{{"data_structures", ds_list},
                    {"default_key_range", key_ranges},
                    {"reclaimers", reclaimer_list},
                    {"free", {"batch", "amortized"}},
                    {"allocators", allocators},
                    {"pin", {"none", "compact", "scatter"}},
                    {"numa", {"none", "local", "interleave"}},
                    {"combinations", combos},
                    {"options", options_description()},
                    {"statistics", statistics_description()},
                    {"machine", this_machine_json()},
                    {"build", build_json()}}
                   .dump(2)
            << '\n';
        return;
    }
    out << "data structures (and their default --key-range):";
    for (auto name : ds_names()) out << ' ' << name << " (" << default_key_range_of(name) << ')';
    out << "\nreclaimers:\n";
    for (const auto& r : reclaimers()) {
        out << "  " << r.name << std::string(r.name.size() < 16 ? 16 - r.name.size() : 1, ' ')
            << smr::to_string(r.family)
            << (r.garbage_bounded ? ", bounded garbage" : ", unbounded garbage")
            << (r.uses_signals ? ", signals" : "") << (r.pings ? ", pings (signals)" : "")
            << (r.needs_quiescent_states ? ", quiescent states" : "")
            << (r.family == smr::reclaimer_family::reference_count
                    ? ", type-stable pool (unbounded without --pool-nodes)"
                    : "")
            << '\n';
    }
    out << "free policies: batch amortized\nallocators:";
    for (auto name : allocator_names()) {
        const auto kind = *parse_allocator(name);
        const bool available = kind == allocator_kind::glibc ||
                               (allocator_selection_supported() && find_allocator_library(kind));
        out << ' ' << name << (available ? "" : " (unavailable)");
    }
    out << "\npin policies: none compact scatter\nnuma policies: none local interleave\n\n"
           "valid combinations (ds x reclaimer; the others run only with --allow-unsafe, except\n"
           "lfrc with a structure whose links are not counted, which cannot run):\n";
    for (auto ds : ds_names()) {
        out << "  " << ds << ':';
        for (const auto& c : combinations()) {
            if (c.structure.name == ds && c.compat.safe) out << ' ' << c.reclaimer.name;
        }
        out << '\n';
    }
    out << "\ncompatibility (ds x reclaimer: safe or UNSAFE, and why):\n";
    for (auto ds : ds_names()) {
        for (const auto& c : combinations()) {
            if (c.structure.name != ds) continue;
            char head[64];
            std::snprintf(head, sizeof head, "  %-12s %-16s %-7s",
                          std::string(c.structure.name).c_str(),
                          std::string(c.reclaimer.name).c_str(), c.compat.safe ? "safe" : "UNSAFE");
            out << head << c.compat.reason << '\n';
        }
    }
}

void print_compatibility_markdown(std::ostream& out) {
    // Reasons are numbered in order of first appearance (reclaimers in
    // measured_domains order, then data structures in registry order), so the
    // output only changes when the table does.
    std::vector<std::string_view> reasons;
    auto reason_number = [&](std::string_view reason) {
        auto it = std::find(reasons.begin(), reasons.end(), reason);
        if (it == reasons.end()) it = reasons.insert(reasons.end(), reason);
        return static_cast<std::size_t>(it - reasons.begin()) + 1;
    };
    const auto ds_list = ds_names();
    out << "<!-- BEGIN generated by `smrbench --list --markdown` from smr/compatibility.hpp; "
           "do not edit by hand -->\n"
        << "| reclaimer | family |";
    for (auto ds : ds_list) out << ' ' << ds << " |";
    out << "\n|---|---|";
    for (std::size_t i = 0; i < ds_list.size(); ++i) out << "---|";
    out << '\n';
    for (const auto& r : reclaimers()) {
        out << "| " << r.name << " | " << smr::to_string(r.family) << " |";
        for (auto ds : ds_list) {
            const combination* c = find_combination(ds, r.name);
            if (c == nullptr) {
                out << " n/a |";
                continue;
            }
            out << (c->compat.safe ? " safe (" : " **unsafe** (") << reason_number(c->compat.reason)
                << ") |";
        }
        out << '\n';
    }
    out << "\nReasons:\n\n";
    for (std::size_t i = 0; i < reasons.size(); ++i) {
        out << i + 1 << ". " << reasons[i] << '\n';
    }
    out << "<!-- END generated -->\n";
}

}  // namespace smrbench
