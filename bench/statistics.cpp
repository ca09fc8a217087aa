#include "statistics.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

namespace smrbench {
namespace {

using nlohmann::json;

/// Where a figure is reported: the run's top level (the median trial's, or
/// over trials), each trial, its reclaimer counters, its pool counters, its
/// STM's counts (transactional structures).
enum class where : std::uint8_t { run, trial, reclaimer, pool, stm, allocator };

/// How a row reads its figure from a trial: a member of the trial, of its
/// reclaimer report, of the domain's own statistics or of the pool's, or a
/// function of the trial (monostate: a run
/// figure computed over trials by report.cpp, only described here).
using stat_field =
    std::variant<std::monostate, std::uint64_t trial_result::*, std::int64_t trial_result::*,
                 double trial_result::*, std::vector<std::uint64_t> trial_result::*,
                 std::uint64_t reclaimer_report::*, std::uint64_t smr::reclaimer_stats::*,
                 double smr::reclaimer_stats::*, std::uint64_t smr::alloc::pool_stats::*,
                 double smr::alloc::pool_stats::*, std::uint64_t smr::stm::stm_stats::*,
                 json (*)(const trial_result&)>;

struct statistic_spec {
    where object;
    std::string_view key;
    std::string_view label;  ///< short, for a table column or a plot axis
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
        case where::stm:
            return "stm";
        case where::allocator:
            return "allocator";
    }
    return "run";
}

using s = smr::reclaimer_stats;
using r = reclaimer_report;
using t = trial_result;
using p = smr::alloc::pool_stats;
using x = smr::stm::stm_stats;

/// A latency histogram of the domain's statistics (free() calls, ping rounds).
using histogram_field = smr::trace::latency_histogram s::*;

template <histogram_field Histogram, int Permille>
json percentile(const trial_result& trial) {
    return (trial.reclaimer.totals.*Histogram).percentile(Permille / 1000.0);
}
template <histogram_field Histogram>
json calls(const trial_result& trial) {
    return (trial.reclaimer.totals.*Histogram).count();
}
template <histogram_field Histogram>
json longest(const trial_result& trial) {
    return (trial.reclaimer.totals.*Histogram).max_ns();
}
json publish_seconds(const trial_result& trial) {
    return static_cast<double>(trial.reclaimer.totals.publish_latency.sum_ns()) * 1e-9;
}
/// Every non-empty bucket of the trial's free-latency histogram: its largest value and its
/// count, in increasing order (sparse: most of the 336 buckets of a run are empty).
json latency_buckets(const trial_result& trial) {
    const smr::trace::latency_histogram& h = trial.reclaimer.totals.free_latency;
    using histogram = smr::trace::latency_histogram;
    json upper = json::array();
    json counts = json::array();
    for (unsigned i = 0; i < histogram::bucket_count; ++i) {
        if (h.samples_in(i) == 0) continue;
        upper.push_back(histogram::bucket_upper_bound(i));
        counts.push_back(h.samples_in(i));
    }
    return {{"upper_ns", upper}, {"counts", counts}, {"sum_ns", h.sum_ns()}};
}
/// 100 x part / whole, or null when whole is 0.
json percent(std::uint64_t part, std::uint64_t whole) {
    if (whole == 0) return nullptr;
    return 100.0 * static_cast<double>(part) / static_cast<double>(whole);
}
json aborted_pct(const trial_result& trial) {
    return percent(trial.stm.aborts, trial.stm.aborts + trial.stm.commits);
}
json false_aborts_pct(const trial_result& trial) {
    return percent(trial.stm.false_aborts, trial.stm.aborts);
}
json remote_frees(const trial_result& trial) {
    if (!trial.reclaimer.remote_frees_counted) return nullptr;
    return trial.reclaimer.totals.remote_frees;
}
json remote_frees_pct(const trial_result& trial) {
    if (!trial.reclaimer.remote_frees_counted) return nullptr;
    return percent(trial.reclaimer.totals.remote_frees, trial.reclaimer.totals.freed);
}
/// An allocator counter (present: allocator_counters_json returns null
/// without them).
template <std::uint64_t allocator_counters::*Field>
json counted(const trial_result& trial) {
    return (*trial.allocator_counts).*Field;
}
json lock_wait_seconds(const trial_result& trial) {
    return static_cast<double>(trial.allocator_counts->bin_lock_wait_ns) * 1e-9;
}
json capacity(const trial_result& trial) {
    if (trial.pool.capacity == unbounded_pool_capacity) return nullptr;
    return trial.pool.capacity;
}

constexpr std::array table{
    statistic_spec{where::run, "throughput_ops_per_s", "throughput", "ops/s",
                   "the median trial's measured operations per second"},
    statistic_spec{where::run, "throughput_min_ops_per_s", "slowest trial's throughput", "ops/s",
                   "the slowest trial's"},
    statistic_spec{where::run, "throughput_max_ops_per_s", "fastest trial's throughput", "ops/s",
                   "the fastest trial's"},
    statistic_spec{where::run, "exec_time_per_op_ns", "execution time per operation", "ns",
                   "the median trial's (Hart et al.: reported when threads outnumber CPUs)"},
    statistic_spec{where::run, "cpu_time_per_op_ns", "CPU time per operation", "ns",
                   "the median trial's (Hart et al.: reported when CPUs suffice)"},
    statistic_spec{where::run, "cpus_used", "CPUs used", "CPUs",
                   "CPUs the workers could occupy: the fewer of threads and machine.cpus"},
    statistic_spec{where::run, "peak_rss_bytes", "peak memory, RSS", "bytes",
                   "the largest peak RSS of any trial"},
    statistic_spec{where::run, "failed_operations", "failed operations", "operations",
                   "the median trial's operations whose allocation failed (a pool)"},
    statistic_spec{where::trial, "throughput_ops_per_s", "throughput", "ops/s",
                   "operations / measured_seconds", &t::throughput_ops_per_s},
    statistic_spec{where::trial, "exec_time_per_op_ns", "execution time per operation", "ns",
                   "measured_seconds / operations (Hart et al., Section 4)",
                   &t::exec_time_per_op_ns},
    statistic_spec{where::trial, "cpu_time_per_op_ns", "CPU time per operation", "ns",
                   "execution time per operation x worker threads", &t::cpu_time_per_op_ns},
    statistic_spec{where::trial, "operations", "operations", "operations",
                   "operations in the measured interval", &t::operations},
    statistic_spec{where::trial, "measured_seconds", "measured time", "s", "the measured interval",
                   &t::measured_seconds},
    statistic_spec{where::trial, "ops_per_thread", "operations per thread", "operations",
                   "per worker, in thread order", &t::ops_per_thread},
    statistic_spec{where::trial, "prefill_size", "prefill size", "keys",
                   "keys inserted by the prefill", &t::prefill_size},
    statistic_spec{where::trial, "prefill_seconds", "prefill time", "s", "time the prefill took",
                   &t::prefill_seconds},
    statistic_spec{where::trial, "prefill_main_keys", "prefill by the main thread", "keys",
                   "keys of the prefill the main thread inserted (--prefill-by main: all; "
                   "workers: 0)",
                   &t::prefill_main_keys},
    statistic_spec{where::trial, "peak_rss_bytes", "peak memory, RSS", "bytes",
                   "the process's peak RSS in the trial", &t::peak_rss_bytes},
    statistic_spec{where::trial, "failed_operations", "failed operations", "operations",
                   "operations whose allocation failed (a pool that ran out)",
                   &t::failed_operations},
    statistic_spec{where::reclaimer, "allocated", "nodes allocated", "nodes",
                   "nodes allocated, prefill included", &s::allocated},
    statistic_spec{where::reclaimer, "allocated_bytes", "allocated", "bytes",
                   "bytes of those nodes", &s::allocated_bytes},
    statistic_spec{where::reclaimer, "measured_allocated", "nodes allocated while measured",
                   "nodes", "nodes allocated in the measured interval", &r::measured_allocated},
    statistic_spec{where::reclaimer, "measured_allocated_bytes", "allocated while measured",
                   "bytes", "bytes allocated in the measured interval",
                   &r::measured_allocated_bytes},
    statistic_spec{where::reclaimer, "retired", "retired", "nodes",
                   "nodes unlinked and handed to the reclaimer", &s::retired},
    statistic_spec{where::reclaimer, "freed", "freed", "nodes", "retired nodes freed", &s::freed},
    statistic_spec{where::reclaimer, "discarded", "discarded", "nodes",
                   "nodes allocated, never published and freed at once", &s::discarded},
    statistic_spec{where::reclaimer, "garbage_end", "garbage at the end", "nodes",
                   "retired, not yet freed, when the workers stopped", &r::garbage_end},
    statistic_spec{where::reclaimer, "garbage_peak", "garbage", "nodes", "the most garbage sampled",
                   &s::garbage_peak},
    statistic_spec{where::reclaimer, "epochs", "epoch advances", "advances",
                   "global epoch advances (token rounds for token schemes)", &s::epochs},
    statistic_spec{where::reclaimer, "signals", "signals", "signals",
                   "neutralization signals sent (nbr)", &s::signals},
    statistic_spec{where::reclaimer, "restarts", "restarts", "restarts",
                   "read phases restarted by a neutralization (nbr)", &s::restarts},
    statistic_spec{where::reclaimer, "heavy_barriers", "heavy barriers", "calls",
                   "membarrier calls of asymmetric fences, one per scan (hp)", &s::heavy_barriers},
    statistic_spec{where::reclaimer, "remote_frees", "remote frees", "nodes",
                   "freed nodes another thread had allocated (null: no --count-remote-frees)",
                   &remote_frees},
    statistic_spec{where::reclaimer, "remote_frees_pct", "remote frees", "% of freed",
                   "remote_frees / freed (null: not counted, or nothing freed)", &remote_frees_pct},
    statistic_spec{where::reclaimer, "free_seconds", "time in free()", "s",
                   "time inside free(), summed over threads (the timed calls' sum x freed / "
                   "free_calls)",
                   &s::free_seconds},
    statistic_spec{where::reclaimer, "free_calls", "free() calls timed", "calls",
                   "free() calls timed, one in --time-frees-every (every one with --timeline)",
                   &calls<&s::free_latency>},
    statistic_spec{where::reclaimer, "free_latency_ns/p50", "free() call latency, median", "ns",
                   "median free() call", &percentile<&s::free_latency, 500>},
    statistic_spec{where::reclaimer, "free_latency_ns/p99", "free() call latency, p99", "ns",
                   "99th percentile free() call", &percentile<&s::free_latency, 990>},
    statistic_spec{where::reclaimer, "free_latency_ns/p999", "free() call latency, p99.9", "ns",
                   "99.9th percentile free() call", &percentile<&s::free_latency, 999>},
    statistic_spec{where::reclaimer, "free_latency_ns/max", "free() call latency, max", "ns",
                   "longest free() call", &longest<&s::free_latency>},
    statistic_spec{where::reclaimer, "free_latency_histogram", "free() call latency histogram",
                   "ns",
                   "every non-empty bucket of the timed free() calls: upper_ns (a bucket's "
                   "largest value: exact below 16 ns, then 8 buckets per power of two, within "
                   "12.5 %), counts, and sum_ns",
                   &latency_buckets},
    statistic_spec{where::reclaimer, "publish_rounds", "ping rounds", "rounds",
                   "Publish-on-Ping rounds that signalled another thread and waited for its "
                   "publication (0: the scheme does not ping)",
                   &calls<&s::publish_latency>},
    statistic_spec{where::reclaimer, "publish_seconds", "time in ping rounds", "s",
                   "time reclaiming threads spent in ping rounds, summed", &publish_seconds},
    statistic_spec{where::reclaimer, "publish_latency_ns/p50", "publication latency, median", "ns",
                   "median ping round: fence, signals, and the wait for every answer",
                   &percentile<&s::publish_latency, 500>},
    statistic_spec{where::reclaimer, "publish_latency_ns/p99", "publication latency, p99", "ns",
                   "99th percentile ping round", &percentile<&s::publish_latency, 990>},
    statistic_spec{where::reclaimer, "publish_latency_ns/max", "publication latency, max", "ns",
                   "longest ping round", &longest<&s::publish_latency>},
    statistic_spec{where::allocator, "tcache_flushes", "thread-cache flushes", "flushes",
                   "jemalloc: thread caches flushed into a size class's bins (a cache that "
                   "overflowed, or a worker's at exit)",
                   &counted<&allocator_counters::tcache_flushes>},
    statistic_spec{where::allocator, "bin_lock_acquisitions", "bin lock acquisitions",
                   "acquisitions", "jemalloc: bin locks taken, by flushes and refills",
                   &counted<&allocator_counters::bin_lock_acquisitions>},
    statistic_spec{where::allocator, "bin_lock_waits", "contended bin locks", "acquisitions",
                   "jemalloc: of those, acquisitions that waited for another thread",
                   &counted<&allocator_counters::bin_lock_waits>},
    statistic_spec{where::allocator, "bin_lock_wait_seconds", "time waiting for bin locks", "s",
                   "jemalloc: time threads waited for bin locks, summed", &lock_wait_seconds},
    statistic_spec{where::pool, "capacity", "pool capacity", "blocks",
                   "the pool's size (null: unbounded)", &capacity},
    statistic_spec{where::pool, "carved", "blocks carved", "blocks",
                   "blocks drawn from the allocator", &p::carved},
    statistic_spec{where::pool, "in_use_peak", "peak blocks in use", "blocks",
                   "peak of blocks in use or cached in threads' magazines", &p::in_use_peak},
    statistic_spec{where::pool, "failures", "empty-pool allocations", "allocations",
                   "allocations that found it empty", &p::failures},
    statistic_spec{where::pool, "retries", "re-checks", "re-checks",
                   "re-checks while waiting for a block", &p::retries},
    statistic_spec{where::pool, "gave_up", "allocations given up", "allocations",
                   "allocations that returned no memory", &p::gave_up},
    statistic_spec{where::pool, "wait_seconds", "time waiting for a block", "s",
                   "time spent waiting, summed over threads", &p::wait_seconds},
    statistic_spec{where::stm, "commits", "commits", "transactions",
                   "transactions committed in the measured interval (one per operation)",
                   &x::commits},
    statistic_spec{where::stm, "aborts", "aborts", "attempts",
                   "attempts aborted and restarted in the measured interval", &x::aborts},
    statistic_spec{where::stm, "aborted_pct", "aborted transactions", "%",
                   "aborts / (commits + aborts), the paper's Table 4 (null: no attempt)",
                   &aborted_pct},
    statistic_spec{where::stm, "aborts_validation", "aborts, validation", "attempts",
                   "a word read changed (at an extension or the commit)", &x::aborts_validation},
    statistic_spec{where::stm, "aborts_write_locked", "aborts, write met a lock", "attempts",
                   "a store met another transaction's lock", &x::aborts_write_locked},
    statistic_spec{where::stm, "aborts_read_locked", "aborts, read met a lock", "attempts",
                   "a load met another transaction's lock", &x::aborts_read_locked},
    statistic_spec{where::stm, "aborts_explicit", "aborts, explicit", "attempts",
                   "the body restarted itself", &x::aborts_explicit},
    statistic_spec{where::stm, "false_aborts", "false aborts", "attempts",
                   "aborts on a lock, not on data: false_aborts_lock_meet + "
                   "false_aborts_validation (the allocator study's definition)",
                   &x::false_aborts},
    statistic_spec{where::stm, "false_aborts_lock_meet", "false aborts, lock met", "attempts",
                   "a load or store met the lock of an owner writing another 16-byte granule "
                   "(another object): same stripe or same table entry",
                   &x::false_aborts_lock_meet},
    statistic_spec{where::stm, "false_aborts_validation", "false aborts, validation", "attempts",
                   "validation failed only on entries whose last owner wrote another object "
                   "than the word read under them",
                   &x::false_aborts_validation},
    statistic_spec{where::stm, "false_aborts_collision", "false aborts, table collision",
                   "attempts", "of the false aborts, the two stripes only share the table entry",
                   &x::false_aborts_collision},
    statistic_spec{where::stm, "false_aborts_pct", "false aborts", "% of aborts",
                   "false_aborts / aborts (null: no abort)", &false_aborts_pct},
};

/// The member a field of class C is read from, for trial `trial`.
template <class C>
const C& source(const trial_result& trial) {
    if constexpr (std::is_same_v<C, trial_result>) return trial;
    if constexpr (std::is_same_v<C, reclaimer_report>) return trial.reclaimer;
    if constexpr (std::is_same_v<C, smr::reclaimer_stats>) return trial.reclaimer.totals;
    if constexpr (std::is_same_v<C, smr::alloc::pool_stats>) return trial.pool;
    if constexpr (std::is_same_v<C, smr::stm::stm_stats>) return trial.stm;
}

template <class Field>
struct member_of;
template <class M, class C>
struct member_of<M C::*> {
    using type = C;
};

/// Every row of `object`, read from `trial`; a '/' in a key nests.
json rows_json(where object, const trial_result& trial) {
    json out = json::object();
    for (const statistic_spec& spec : table) {
        if (spec.object != object) continue;
        std::string path(1, '/');
        path.append(spec.key);  // (GCC 12 -O3 warns -Wrestrict on "/" + std::string)
        const json::json_pointer at(path);
        std::visit(
            [&]<class Field>(const Field& field) {
                if constexpr (std::is_member_object_pointer_v<Field>) {
                    out[at] = source<typename member_of<Field>::type>(trial).*field;
                } else if constexpr (std::is_same_v<Field, json (*)(const trial_result&)>) {
                    out[at] = field(trial);
                }
            },
            spec.field);
    }
    return out;
}

}  // namespace

json trial_statistics_json(const trial_result& trial) { return rows_json(where::trial, trial); }

json reclaimer_json(const trial_result& trial) { return rows_json(where::reclaimer, trial); }

json pool_statistics_json(const trial_result& trial) { return rows_json(where::pool, trial); }

json allocator_counters_json(const trial_result& trial) {
    if (!trial.allocator_counts) return nullptr;
    return rows_json(where::allocator, trial);
}

json stm_statistics_json(const trial_result& trial) {
    if (!trial.has_stm) return nullptr;
    return rows_json(where::stm, trial);
}

json statistics_description() {
    json out = json::array();
    for (const statistic_spec& spec : table) {
        out.push_back({{"object", object_name(spec.object)},
                       {"key", spec.key},
                       {"label", spec.label},
                       {"unit", spec.unit},
                       {"help", spec.help}});
    }
    return out;
}

}  // namespace smrbench
