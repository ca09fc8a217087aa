// What one trial measured.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "allocator_stats.hpp"
#include "smr/alloc/pool_resource.hpp"
#include "smr/reclaim/statistics.hpp"
#include "smr/reclaim/traits.hpp"
#include "smr/stm/transaction.hpp"

namespace smrbench {

/// A trial's reclaimer figures: the domain's own statistics as they are
/// (statistics.cpp's table reads them), and what only the trial knows.
struct reclaimer_report {
    smr::reclaimer_stats totals;
    std::uint64_t measured_allocated = 0;        ///< in the measured interval (no prefill)
    std::uint64_t measured_allocated_bytes = 0;  ///< in the measured interval (no prefill)
    std::uint64_t garbage_end = 0;               ///< unreclaimed when the workers stopped
    bool remote_frees_counted = false;           ///< --count-remote-frees
};

/// One --sample-ms sample.
struct memory_sample {
    double time_ms = 0;  ///< since the measured start
    std::uint64_t rss_bytes = 0;
    std::int64_t allocator_bytes = -1;  ///< -1: the allocator offers no figure
    std::uint64_t garbage = 0;
};

/// The capacity of the pool reference counting runs on without --pool-nodes:
/// more blocks than any run allocates (reported as null).
inline constexpr std::uint64_t unbounded_pool_capacity = std::uint64_t{1} << 62;

struct trial_result {
    int trial = 0;
    /// "ok", or "pool_exhausted": allocations gave up (--on-empty fail, or
    /// threads still waiting for pool memory when the trial ended). Either
    /// way the trial ran its time and was validated: exhaustion is a result.
    std::string status = "ok";
    /// Operations that gave up because their allocation failed.
    std::uint64_t failed_operations = 0;
    double throughput_ops_per_s = 0;
    /// Hart et al.'s measures (Section 4): the measured interval over all
    /// threads' operations, and that times the worker threads (0 when no
    /// operation ran).
    double exec_time_per_op_ns = 0;
    double cpu_time_per_op_ns = 0;
    std::uint64_t operations = 0;
    double measured_seconds = 0;
    std::vector<std::uint64_t> ops_per_thread;
    std::int64_t prefill_size = 0;
    double prefill_seconds = 0;
    /// Keys of the prefill the main thread inserted (--prefill-by main: all of them; else 0).
    std::int64_t prefill_main_keys = 0;

    bool validated = false;
    std::string validation_error;  ///< empty when validated
    std::int64_t key_sum = 0, expected_key_sum = 0;
    std::int64_t size = 0, expected_size = 0;

    std::uint64_t peak_rss_bytes = 0;
    reclaimer_report reclaimer;
    /// Nodes came from a pool: --pool-nodes, or the unbounded one reference
    /// counting always runs on (capacity detail::unbounded_pool).
    bool has_pool = false;
    smr::alloc::pool_stats pool;  ///< all zero without a pool
    /// A transactional structure's STM (DS::stm_stats()), in the measured
    /// interval.
    bool has_stm = false;
    smr::stm::stm_stats stm;  ///< all zero without an STM
    std::vector<memory_sample> samples;
    /// The allocator's counters over the measured interval, where it keeps
    /// any (jemalloc).
    std::optional<allocator_counters> allocator_counts;
};

}  // namespace smrbench
