// What one smrbench invocation runs, as a plain description: the structure x
// reclaimer pair, the domain's configuration, the workload, the recordings
// and the outputs. parse_command_line (options.hpp) fills it once, through
// the option table (option_table.hpp), whose rows write straight into its
// members; everything after parsing reads it and nothing writes it but main,
// which adds the allocator it verified.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "allocator.hpp"
#include "numa.hpp"
#include "pinning.hpp"
#include "smr/alloc/pool_resource.hpp"
#include "smr/free_policy.hpp"
#include "smr/reclaim/domain_config.hpp"

namespace smrbench {

struct combination;  // registry.hpp: a structure x reclaimer pair compiled in

enum class prefill_mode { automatic, none, count };

/// What smrbench runs: the set benchmark (no subcommand), Hoard's allocator
/// microbenchmark, the address-layout measurement, or a STAMP application.
enum class bench_command : std::uint8_t { set, threadtest, layout, stamp };

std::string_view to_string(bench_command command);
std::string to_string(prefill_mode mode, std::int64_t count);

/// The set benchmark's workload: which operations the workers draw over which
/// keys, how the structure starts, and the thread that stalls.
struct workload_spec {
    std::int64_t key_range = 0;  // --key-range; 0: not given, the structure's default
    int insert_pct = 50;
    int erase_pct = 50;
    bool alternate = false;  // updates take turns: insert, then erase that key
    prefill_mode prefill = prefill_mode::automatic;
    std::int64_t prefill_count = 0;  // prefill_mode::count only
    bool prefill_by_main = false;    // --prefill-by, resolved: the main thread fills the structure
    bool stall = false;
    bool stall_hold = false;  // --stall-hold: the stalled thread holds the first node
    /// Operations between the quiescent states a worker declares (qsbr,
    /// urcu_qsbr); Hart et al. declare one per 100-operation loop.
    std::uint32_t quiescent_every = 1;

    int contains_pct() const { return 100 - insert_pct - erase_pct; }

    /// Nodes the structure holds once prefilled: the steady-state size of a
    /// uniform workload, key_range x insert / (insert + erase), or half the
    /// range for read-only workloads.
    std::int64_t prefill_target() const;
};

/// What a trial records beside its result (docs/timeline-format.md): each is
/// off until its path (or period) is given.
struct recording_spec {
    std::string timeline_path;                 // --timeline: empty = off
    std::uint64_t timeline_min_free_ns = 0;    // free_call events at least this long
    std::uint64_t timeline_capacity = 100000;  // events per thread
    std::string garbage_series_path;           // --garbage-series: empty = off
    std::uint32_t sample_ms = 0;               // --sample-ms: 0 = no time series in the JSON
};

/// What smrbench prints, which is no part of the run (nor of its JSON config).
struct output_spec {
    bool json = false;
    bool list = false;
    bool check_only = false;  // --check: validate the command line, run nothing
    bool quiet = false;
    bool markdown = false;  // --list --markdown: the compatibility table
};

struct bench_config {
    bench_command command = bench_command::set;
    std::string ds = "dgt_bst";
    std::string reclaimer = "debra";
    /// The pair ds x reclaimer, resolved once by parse_command_line for the
    /// set benchmark; null for the subcommands and --list.
    const combination* combo = nullptr;
    bool allow_unsafe = false;  // run a combination smr::check calls unsafe
    /// The reclaimer's parameters, which the option table's domain rows
    /// write into directly (one declaration each: smr::domain_config's, which
    /// says what each means). smrbench's defaults are the library's but two:
    /// the bag size starts "not given" (0), which parse_command_line replaces
    /// with the run's reclaimer's default, and one free in 16 is timed.
    /// max_threads, memory and time_frees are the trial's to set.
    smr::domain_config domain{.bag_threshold = 0, .time_frees_every = 16};
    workload_spec workload;
    recording_spec recording;
    output_spec output;

    // The structure's own options (smr/ds/options.hpp), each refused with a
    // structure that has no such choice.
    bool restart_from_head = false;  // hm_list: every read phase from the head
    std::int64_t buckets = 0;        // --buckets (hash_set); 0: not given, key_range / 2
    // The STM's ownership-record table (transactional structures): 2^ort_bits
    // versioned locks, 2^ort_shift-byte stripes (TinySTM's defaults).
    std::uint32_t ort_bits = 20;
    std::uint32_t ort_shift = 5;

    // The run, which the subcommands share: threads, length, trials, the
    // allocator and where threads and memory are placed.
    int threads = 2;
    double duration_s = 1.0;
    std::uint64_t ops_per_thread = 0;  // >0: run exactly this many operations instead of --duration
    int trials = 1;
    std::uint64_t seed = 1;
    allocator_kind alloc = allocator_kind::glibc;
    pin_policy pin = pin_policy::none;
    numa_policy numa = numa_policy::none;
    // Hart et al.'s bounded pool, on top of the --alloc allocator (0: no pool).
    std::uint64_t pool_nodes = 0;
    smr::alloc::on_empty on_empty = smr::alloc::on_empty::yield;

    // threadtest and layout (bench/threadtest.hpp, bench/layout.hpp).
    std::uint64_t block_size = 64;  // bytes per malloc
    std::uint64_t objects = 0;      // threadtest: 0, the paper's form; N, Hoard's rounds of N
    bool check_blocks = false;      // threadtest: tag every block and check it before free
    std::uint64_t blocks = 4096;    // layout: blocks each thread allocates and keeps

    // stamp (bench/stamp.hpp): the application and its input, by STAMP's name.
    std::string app = "vacation-low";

    /// Added to the expected key sum of every trial; only the test build
    /// (smrbench_faults, bench/faults.hpp) can set it.
    std::int64_t injected_key_sum_error = 0;

    /// Filled in by main() after the allocator is verified, so trials can
    /// label what they record.
    allocator_identity allocator;
    numa_outcome numa_result;  // what --numa did (main, before the first trial)

    /// hash_set's table size: --buckets, or key_range / 2 (at least 1), load
    /// factor 1 at the steady state of a 50/50 workload.
    std::size_t bucket_count() const;
};

}  // namespace smrbench
