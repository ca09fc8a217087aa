#include "statistics.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

namespace smrbench {
namespace {

using nlohmann::json;

/// Where a figure is reported: the run's top level (the median trial's, or
/// over trials), each trial, its reclaimer counters, its pool counters.
enum class where : std::uint8_t { run, trial, reclaimer, pool };

/// The reclaimer_report member a reclaimer row reads (monostate: a figure
/// reported elsewhere, described here only).
using stat_field =
    std::variant<std::monostate, std::uint64_t reclaimer_report::*, double reclaimer_report::*>;

struct statistic_spec {
    where object;
    std::string_view key;
    std::string_view unit;
    std::string_view help;
    stat_field field{};
};

constexpr std::string_view object_name(where object) {
    switch (object) {
        case where::run:
            return "run";
        case where::trial:
            return "trial";
        case where::reclaimer:
            return "reclaimer";
        case where::pool:
            return "pool";
    }
    return "run";
}

using r = reclaimer_report;

const std::array table{
    statistic_spec{where::run, "throughput_ops_per_s", "ops/s",
                   "the median trial's measured operations per second"},
    statistic_spec{where::run, "throughput_min_ops_per_s", "ops/s", "the slowest trial's"},
    statistic_spec{where::run, "throughput_max_ops_per_s", "ops/s", "the fastest trial's"},
    statistic_spec{where::run, "peak_rss_bytes", "bytes", "the largest peak RSS of any trial"},
    statistic_spec{where::run, "failed_operations", "operations",
                   "the median trial's operations whose allocation failed (a pool)"},
    statistic_spec{where::trial, "throughput_ops_per_s", "ops/s", "operations / measured_seconds"},
    statistic_spec{where::trial, "operations", "operations", "operations in the measured interval"},
    statistic_spec{where::trial, "measured_seconds", "s", "the measured interval"},
    statistic_spec{where::trial, "ops_per_thread", "operations", "per worker, in thread order"},
    statistic_spec{where::trial, "prefill_size", "keys", "keys inserted by the prefill"},
    statistic_spec{where::trial, "prefill_seconds", "s", "time the prefill took"},
    statistic_spec{where::trial, "peak_rss_bytes", "bytes", "the process's peak RSS in the trial"},
    statistic_spec{where::trial, "failed_operations", "operations",
                   "operations whose allocation failed (a pool that ran out)"},
    statistic_spec{where::reclaimer, "allocated", "nodes", "nodes allocated, prefill included",
                   &r::allocated},
    statistic_spec{where::reclaimer, "allocated_bytes", "bytes", "bytes of those nodes",
                   &r::allocated_bytes},
    statistic_spec{where::reclaimer, "measured_allocated", "nodes",
                   "nodes allocated in the measured interval", &r::measured_allocated},
    statistic_spec{where::reclaimer, "measured_allocated_bytes", "bytes",
                   "bytes allocated in the measured interval", &r::measured_allocated_bytes},
    statistic_spec{where::reclaimer, "retired", "nodes",
                   "nodes unlinked and handed to the reclaimer", &r::retired},
    statistic_spec{where::reclaimer, "freed", "nodes", "retired nodes freed", &r::freed},
    statistic_spec{where::reclaimer, "discarded", "nodes",
                   "nodes allocated, never published and freed at once", &r::discarded},
    statistic_spec{where::reclaimer, "garbage_end", "nodes",
                   "retired, not yet freed, when the workers stopped", &r::garbage_end},
    statistic_spec{where::reclaimer, "garbage_peak", "nodes", "the most garbage sampled",
                   &r::garbage_peak},
    statistic_spec{where::reclaimer, "epochs", "advances",
                   "global epoch advances (token rounds for token schemes)", &r::epochs},
    statistic_spec{where::reclaimer, "signals", "signals", "neutralization signals sent (nbr)",
                   &r::signals},
    statistic_spec{where::reclaimer, "restarts", "restarts",
                   "read phases restarted by a neutralization (nbr)", &r::restarts},
    statistic_spec{where::reclaimer, "free_seconds", "s", "time inside free(), summed over threads",
                   &r::free_seconds},
    statistic_spec{where::reclaimer, "free_calls", "calls", "free() calls timed", &r::free_calls},
    statistic_spec{where::reclaimer, "free_latency_ns/p50", "ns", "median free() call",
                   &r::free_p50_ns},
    statistic_spec{where::reclaimer, "free_latency_ns/p99", "ns", "99th percentile free() call",
                   &r::free_p99_ns},
    statistic_spec{where::reclaimer, "free_latency_ns/p999", "ns", "99.9th percentile free() call",
                   &r::free_p999_ns},
    statistic_spec{where::reclaimer, "free_latency_ns/max", "ns", "longest free() call",
                   &r::free_max_ns},
    statistic_spec{where::pool, "capacity", "blocks", "the pool's size (null: unbounded)"},
    statistic_spec{where::pool, "carved", "blocks", "blocks drawn from the allocator"},
    statistic_spec{where::pool, "in_use_peak", "blocks",
                   "peak of blocks in use or cached in threads' magazines"},
    statistic_spec{where::pool, "failures", "allocations", "allocations that found it empty"},
    statistic_spec{where::pool, "retries", "re-checks", "re-checks while waiting for a block"},
    statistic_spec{where::pool, "gave_up", "allocations", "allocations that returned no memory"},
    statistic_spec{where::pool, "wait_seconds", "s", "time spent waiting, summed over threads"},
};

}  // namespace

json reclaimer_json(const reclaimer_report& report) {
    json out = json::object();
    for (const statistic_spec& spec : table) {
        if (spec.object != where::reclaimer) continue;
        std::string path(1, '/');
        path.append(spec.key);  // (GCC 12 -O3 warns -Wrestrict on "/" + std::string)
        const json::json_pointer at(path);
        std::visit(
            [&]<class Field>(const Field& field) {
                if constexpr (!std::is_same_v<Field, std::monostate>) out[at] = report.*field;
            },
            spec.field);
    }
    return out;
}

json statistics_description() {
    json out = json::array();
    for (const statistic_spec& spec : table) {
        out.push_back({{"object", object_name(spec.object)},
                       {"key", spec.key},
                       {"unit", spec.unit},
                       {"help", spec.help}});
    }
    return out;
}

}  // namespace smrbench
