#include "option_table.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "build_info.hpp"
#include "machine.hpp"
#include "registry.hpp"

namespace smrbench {
namespace {

using nlohmann::json;

constexpr double two_to(int bits) { return static_cast<double>(std::uint64_t{1} << bits); }

/// A ranged number.
constexpr option_spec number(std::string_view name, option_field field, std::string_view help,
                             double minimum, double maximum, std::string_view unit = "",
                             option_target target = option_target::benchmark) {
    return {.name = name,
            .field = field,
            .help = help,
            .target = target,
            .ranged = true,
            .minimum = minimum,
            .maximum = maximum,
            .unit = unit};
}

/// `spec`, taken by `commands` (command_set bits) instead of the set
/// benchmark alone.
constexpr option_spec shared(option_spec spec, std::uint8_t commands) {
    spec.commands = commands;
    return spec;
}

/// An option whose default depends on others (the description says null).
constexpr option_spec derived(option_spec spec) {
    spec.derived_default = true;
    return spec;
}

/// A reclaimer parameter: the smr::domain_config (or free policy) member
/// `member`, which bench_config::domain holds.
template <class T, class Owner>
constexpr option_spec tuning(T Owner::*member, std::string_view name, std::string_view help,
                             double minimum, double maximum, std::string_view unit) {
    return number(name, config_member<T>(member), help, minimum, maximum, unit,
                  option_target::domain);
}

/// Whether a reclaimer reads the smr::domain_config member Read names.
template <bool smr::tunings_read::*Read>
bool reads(const smr::reclaimer_traits& reclaimer) {
    return reclaimer.reads.*Read;
}

/// `spec`, an option of the reclaimers `reader` accepts (the JSON config
/// records null in a run of any other).
constexpr option_spec read_by(bool (*reader)(const smr::reclaimer_traits&), option_spec spec) {
    spec.read_by = reader;
    return spec;
}

/// A parameter of the reclaimers whose traits.reads has Read: the
/// smr::domain_config member `member`.
template <bool smr::tunings_read::*Read, class T>
constexpr option_spec reclaimer_tuning(T smr::domain_config::*member, std::string_view name,
                                       std::string_view help, double minimum, double maximum,
                                       std::string_view unit) {
    return read_by(&reads<Read>, tuning(member, name, help, minimum, maximum, unit));
}

bool needs_quiescent_states(const smr::reclaimer_traits& reclaimer) {
    return reclaimer.needs_quiescent_states;
}

bool threads_begin_epochs(const smr::reclaimer_traits& reclaimer) {
    return reclaimer.threads_begin_epochs;
}

/// A transactional structure's option: its value, or null for the others
/// (layout maps its blocks to the same table).
template <std::uint32_t bench_config::*Field>
json stm_option_json(const bench_config& c) {
    if (c.command == bench_command::layout || c.command == bench_command::stamp) return c.*Field;
    if (c.combo == nullptr || !c.combo->structure.transactional) return nullptr;
    return c.*Field;
}

/// A ranged option of the transactional structures' STM, in bits.
template <std::uint32_t bench_config::*Field>
constexpr option_spec stm_option(std::string_view name, std::string_view help, double minimum,
                                 double maximum) {
    option_spec spec = number(name, Field, help, minimum, maximum, "bits");
    spec.json = stm_option_json<Field>;
    return spec;
}

/// --fence as asked (the reclaimer object says what ran).
json fence_json(const bench_config& c) { return smr::to_string(c.domain.fence); }

json buckets_json(const bench_config& c) {
    if (c.combo == nullptr || !c.combo->structure.buckets_option) return nullptr;
    return c.bucket_count();
}

/// --bag-size's default. 32K nodes is the Epochs paper's uniform batch
/// (Section 5) and NBR's in the NBR paper, and stays the epoch schemes'
/// (rcu, qsbr_ibr). The reservation and neutralization schemes default to 2K,
/// the size a user of each would choose: docs/reproductions.md measured 32K
/// as NBR's worst bag on both trees ("NBR's bag size", up to a third slower
/// than ebr with four times the memory) and as the slowest retire list of
/// hp, he, ibr and wfe on the hash set at 8 threads ("Reservation schemes'
/// retire lists"), where 2K holds a fifth of the garbage; kaist-cp/
/// smr-benchmark scans HP's lists every 128 retires and bags NBR's at 512.
/// The experiment files that reproduce a paper set its value themselves.
std::uint64_t default_bag_size(const smr::reclaimer_traits& reclaimer) {
    switch (reclaimer.family) {
        case smr::reclaimer_family::neutralization:
        case smr::reclaimer_family::reservation:
            return 2048;
        default:
            return 32768;
    }
}

/// `spec`, whose default is default_for(the run's reclaimer).
constexpr option_spec default_by_reclaimer(
    option_spec spec, std::uint64_t (*default_for)(const smr::reclaimer_traits&)) {
    spec.derived_default = true;
    spec.default_for = default_for;
    return spec;
}

// The papers' settings are smrbench's defaults (bench_config's initializers,
// which each help text's reason cites); the library's own defaults are
// smr::domain_config's.
constexpr std::array table{
    option_spec{.name = "ds", .field = &bench_config::ds, .help = "data structure"},
    option_spec{.name = "reclaimer",
                .field = &bench_config::reclaimer,
                .help = "memory reclamation scheme"},
    option_spec{
        .name = "free",
        .field = text_option{"batch", "batch amortized"},
        .help = "freeing policy: batch | amortized",
        .target = option_target::domain,
        .json = [](const bench_config& c) -> json { return smr::to_string(c.domain.free.mode); }},
    tuning(&smr::free_policy::k, "free-k", "amortized: nodes freed per operation", 1, two_to(20),
           "nodes"),
    tuning(&smr::domain_config::time_frees_every, "time-frees-every",
           "time one free() call in N on average, at random gaps, into free_latency_ns and "
           "free_seconds (scaled to all calls); 1: every call, as a --timeline does. Two timestamp "
           "reads cost more than a free() often does",
           1, two_to(30), "frees"),
    option_spec{.name = "count-remote-frees",
                .field = &smr::domain_config::count_remote_frees,
                .help =
                    "count the freed nodes another thread allocated (reclaimer.remote_frees): each "
                    "node's block carries its allocating thread's 4-byte tag, so it may move up a "
                    "size class (the DGT node does not); off, nodes are exactly their type's size",
                .target = option_target::domain},
    tuning(&smr::free_policy::catchup_divisor, "free-catchup-div",
           "amortized: also free len/N per operation when the freeable list is long (0: off, the "
           "Epochs paper's k per operation; 1024 bounds the list of a structure that retires more "
           "than k per operation)",
           0, two_to(30), "divisor"),
    option_spec{.name = "alloc",
                .field = text_option{"glibc"},
                .help = "allocator: glibc | jemalloc | tcmalloc | mimalloc | tbbmalloc",
                .json = [](const bench_config& c) -> json { return to_string(c.alloc); },
                .commands = for_all},
    shared(number("block-size", &bench_config::block_size,
                  "threadtest, layout: bytes of every block allocated", 1, two_to(30), "bytes"),
           for_threadtest | for_layout),
    shared(number("objects", &bench_config::objects,
                  "threadtest: 0, the paper's form (each thread allocates one block and frees it "
                  "at once); N, Hoard's original form (rounds of N blocks allocated, then freed)",
                  0, two_to(24), "blocks"),
           for_threadtest),
    option_spec{.name = "check-blocks",
                .field = &bench_config::check_blocks,
                .help = "threadtest: write a tag at both ends of every block and check it "
                        "before the free (finds a block handed out twice; costs stores the "
                        "paper's pure malloc/free loop does not make)",
                .commands = for_threadtest},
    option_spec{.name = "app",
                // Every input of stamp::applications(), in order (a constant table
                // cannot call it; Cli.StampOffersEveryApplicationsInput compares them).
                .field = text_option{"vacation-low",
                                     "genome genome+ genome++ intruder intruder+ intruder++ "
                                     "kmeans-low kmeans-high kmeans-low+ kmeans-high+ "
                                     "kmeans-low++ kmeans-high++ "
                                     "labyrinth labyrinth+ labyrinth++ ssca2 ssca2+ ssca2++ "
                                     "vacation-low vacation-high vacation-low+ vacation-high+ "
                                     "vacation-low++ vacation-high++ yada yada+ yada++"},
                .help = "stamp: the application and its input, by STAMP's name (without +: its "
                        "simulator inputs; + larger; ++ its inputs for real machines)",
                .json = [](const bench_config& c) -> json { return c.app; },
                .commands = for_stamp},
    shared(number("blocks", &bench_config::blocks,
                  "layout: blocks each thread allocates and keeps (two threads taking turns, "
                  "then one alone)",
                  2, two_to(22), "blocks"),
           for_layout),
    number("pool-nodes", &bench_config::pool_nodes,
           "allocate nodes from a bounded pool of N blocks on top of --alloc, which can run out "
           "(Hart et al.; 0: no pool)",
           0, two_to(32), "blocks"),
    option_spec{.name = "on-empty",
                .field = text_option{"yield", "yield spin spin_idle fail"},
                .help = "with --pool-nodes, an allocation that finds the pool empty: yield "
                        "(sched_yield and retry, holding up no grace period: Hart et al.'s Fig. "
                        "13) | spin (busy-wait, holding up the grace periods it held: their Fig. "
                        "14) | spin_idle (busy-wait, holding up none) | fail (the operation gives "
                        "up)",
                .json = [](const bench_config& c) -> json {
                    if (c.pool_nodes == 0) return nullptr;
                    return smr::alloc::to_string(c.on_empty);
                }},
    shared(number("threads", &bench_config::threads, "worker threads (stamp: STAMP's clients, -c)",
                  1, 4096, "threads"),
           for_set | for_threadtest | for_stamp),
    derived(number("key-range", &workload_spec::key_range,
                   "keys are uniform in [0, N) (default: 10000 for a list, 200000 otherwise; "
                   "smrbench --list gives each structure's)",
                   1, two_to(40), "keys")),
    number("insert", &workload_spec::insert_pct, "percent inserts", 0, 100, "%"),
    number("erase", &workload_spec::erase_pct, "percent erases (contains: the rest)", 0, 100, "%"),
    option_spec{.name = "alternate",
                .field = &workload_spec::alternate,
                .help = "a thread's updates take turns: an insert of a random key, then the erase "
                        "of the key it inserted, so the size stays at the prefill (TinySTM's "
                        "integer-set benchmark, the allocator/STM paper's workload; --insert and "
                        "--erase must be equal, their sum the update percentage)"},
    shared(number("duration", &bench_config::duration_s,
                  "measured seconds per trial (fractions allowed)", 0.001, 86400, "s"),
           for_set | for_threadtest),
    shared(number("ops", &bench_config::ops_per_thread,
                  "run exactly N operations per thread instead of --duration (threadtest: "
                  "malloc/free pairs, or rounds with --objects; deterministic: for callgrind)",
                  0, two_to(40), "operations"),
           for_set | for_threadtest),
    shared(
        number("trials", &bench_config::trials, "trials (throughput: median)", 1, 1000, "trials"),
        for_set | for_threadtest | for_stamp),
    option_spec{.name = "prefill",
                .field = text_option{"auto"},
                .help = "auto (steady-state size) | none | N keys",
                .json = [](const bench_config& c) -> json {
                    return to_string(c.workload.prefill, c.workload.prefill_count);
                }},
    option_spec{.name = "prefill-by",
                .field = text_option{"auto", "auto workers main"},
                .help = "who fills the structure before the trial: workers (in parallel, as "
                        "setbench) | main (the main thread alone, as the allocator/STM paper: "
                        "the nodes come from its arena) | auto (main for the stm_* structures, "
                        "workers otherwise)",
                .json = [](const bench_config& c) -> json {
                    return c.workload.prefill_by_main ? "main" : "workers";
                }},
    option_spec{.name = "seed", .field = &bench_config::seed, .help = "random seed"},
    option_spec{.name = "pin",
                .field = text_option{"none", "none compact scatter"},
                .help = "thread placement: none | compact | scatter",
                .json = [](const bench_config& c) -> json { return to_string(c.pin); },
                .commands = for_set | for_threadtest},
    option_spec{.name = "numa",
                .field = text_option{"none", "none local interleave"},
                .help = "memory placement on a NUMA machine: none (as started) | local | "
                        "interleave (every node round-robin, numactl --interleave=all)",
                .json = [](const bench_config& c) -> json { return to_string(c.numa); },
                .commands = for_set | for_threadtest | for_stamp},
    option_spec{.name = "stall",
                .field = &workload_spec::stall,
                .help = "one extra thread stays inside an operation for the whole trial"},
    option_spec{.name = "stall-hold",
                .field = &workload_spec::stall_hold,
                .help = "as --stall, and the stalled thread holds the structure's first node "
                        "(hm_list, cr_list: the first after the head; hash_set, cr_hash_set: "
                        "bucket 0's first; ms_queue: the oldest item's)"},
    option_spec{.name = "json",
                .field = &output_spec::json,
                .help = "print exactly one JSON object on stdout",
                .target = option_target::output,
                .commands = for_all},
    option_spec{.name = "list",
                .field = &output_spec::list,
                .help = "list data structures, reclaimers, allocators and valid combinations",
                .target = option_target::output},
    option_spec{.name = "check",
                .field = &output_spec::check_only,
                .help = "check the command line and exit: 0 and nothing printed if the run "
                        "would start, else 2 and the one-line reason; runs nothing",
                .target = option_target::output,
                .commands = for_all},
    option_spec{.name = "quiet",
                .field = &output_spec::quiet,
                .help = "no progress lines on stderr",
                .target = option_target::output,
                .commands = for_all},
    option_spec{.name = "markdown",
                .field = &output_spec::markdown,
                .help = "with --list: print the reclaimer x data structure compatibility table "
                        "as markdown (docs/compatibility.md)",
                .target = option_target::output},
    option_spec{.name = "allow-unsafe",
                .field = &bench_config::allow_unsafe,
                .help = "run a reclaimer x data structure combination the compatibility table "
                        "calls unsafe (smrbench --list)"},
    option_spec{.name = "restart-from-head",
                .field = &bench_config::restart_from_head,
                .help = "hm_list, hash_set: start every read phase from the head, also after "
                        "unlinking a marked node (the NBR paper's E4 'restarts' variant)"},
    option_spec{.name = "buckets",
                .field = &bench_config::buckets,
                .help = "hash_set, cr_hash_set, stm_hash_set: buckets of the fixed-size table "
                        "(default: key range / 2, "
                        "load factor 1 at the 50/50 steady state)",
                .ranged = true,
                .minimum = 1,
                .maximum = two_to(40),
                .unit = "buckets",
                .derived_default = true,
                .json = buckets_json},
    shared(stm_option<&bench_config::ort_bits>(
               "ort-bits",
               "transactional structures (stm_*), layout, stamp: the STM's ownership-record "
               "table has 2^N versioned locks (TinySTM's default, 20)",
               1, 30),
           for_set | for_layout | for_stamp),
    shared(stm_option<&bench_config::ort_shift>(
               "ort-shift",
               "transactional structures (stm_*), stamp: addresses map to versioned locks by "
               "(address >> N) mod 2^ort-bits, so a stripe of 2^N bytes shares a lock "
               "(TinySTM's default, 5: 32 bytes)",
               0, 12),
           for_set | for_stamp),
    default_by_reclaimer(reclaimer_tuning<&smr::tunings_read::bag_threshold>(
                             &smr::domain_config::bag_threshold, "bag-size",
                             "retire-list length that triggers a scan", 1, two_to(32), "nodes"),
                         &default_bag_size),
    reclaimer_tuning<&smr::tunings_read::advance_every>(
        &smr::domain_config::advance_every, "advance-every",
        "operations between epoch-advance attempts", 1, two_to(30), "operations"),
    reclaimer_tuning<&smr::tunings_read::check_every>(
        &smr::domain_config::check_every, "check-every",
        "operations between checks of another thread", 1, two_to(30), "operations"),
    reclaimer_tuning<&smr::tunings_read::min_epoch_us>(
        &smr::domain_config::min_epoch_us, "min-epoch-us",
        "the global epoch advances at most once per N microseconds (0: as soon as the scheme "
        "allows): a large machine's long epochs and large limbo bags on a small one (the "
        "Epochs paper's remote batch free)",
        0, 60e6, "us"),
    reclaimer_tuning<&smr::tunings_read::epoch_freq>(
        &smr::domain_config::epoch_freq, "epoch-freq",
        "allocations per thread per global epoch (era) increment", 1, two_to(30), "allocations"),
    reclaimer_tuning<&smr::tunings_read::hp_scan_factor>(
        &smr::domain_config::hp_scan_factor, "hp-scan-factor",
        "scan at max(bag size, factor x hazard slots of registered threads + offset)", 0,
        two_to(20), "x hazard slots"),
    reclaimer_tuning<&smr::tunings_read::hp_scan_offset>(
        &smr::domain_config::hp_scan_offset, "hp-scan-offset",
        "add N to factor x hazard slots (Hart et al.'s R = 2H + 100: --hp-scan-factor 2 "
        "--hp-scan-offset 100 --bag-size 1)",
        0, two_to(30), "nodes"),
    reclaimer_tuning<&smr::tunings_read::wfe_fast_attempts>(
        &smr::domain_config::wfe_fast_attempts, "wfe-fast-attempts",
        "fast-path attempts of protect before the wait-free slow path", 1, two_to(20), "attempts"),
    reclaimer_tuning<&smr::tunings_read::token_check_every>(
        &smr::domain_config::token_check_every, "token-check-every", "frees between token checks",
        1, two_to(30), "frees"),
    reclaimer_tuning<&smr::tunings_read::nbr_signal>(
        &smr::domain_config::nbr_signal, "signal", "neutralization signal number (default SIGUSR1)",
        1, 64, "signal"),
    reclaimer_tuning<&smr::tunings_read::pop_signal>(
        &smr::domain_config::pop_signal, "pop-signal",
        "Publish-on-Ping's ping signal number (default SIGUSR2)", 1, 64, "signal"),
    reclaimer_tuning<&smr::tunings_read::nbr_low_watermark>(
        &smr::domain_config::nbr_low_watermark, "nbr-low-watermark",
        "bag size at which a thread waits for another's broadcast (0: half the high watermark)", 0,
        two_to(32), "nodes"),
    reclaimer_tuning<&smr::tunings_read::nbr_high_watermark>(
        &smr::domain_config::nbr_high_watermark, "nbr-high-watermark",
        "bag size at which a thread signals everyone (nbr: its bag size; 0: --bag-size)", 0,
        two_to(32), "nodes"),
    option_spec{.name = "fence",
                .field = text_option{"asymmetric", "asymmetric symmetric"},
                .help = "how a protect orders its announcement before its re-read: asymmetric "
                        "(a compiler barrier per protect, a membarrier call per scan; symmetric "
                        "where the kernel has none, noted in the JSON) | symmetric (a full fence "
                        "per protected pointer, Michael's)",
                .target = option_target::domain,
                .json = &fence_json,
                .read_by = &reads<&smr::tunings_read::fence>},
    option_spec{.name = "timeline",
                .field = &recording_spec::timeline_path,
                .help = "record per-thread events to FILE (docs/timeline-format.md)",
                .metavar = "FILE"},
    read_by(&needs_quiescent_states,
            number("quiescent-every", &workload_spec::quiescent_every,
                   "operations between a worker's quiescent states (Hart et al.: 100, one per "
                   "iteration of their 100-operation loop)",
                   1, two_to(20), "operations")),
    number("timeline-min-ns", &recording_spec::timeline_min_free_ns,
           "record free() calls at least this long (0: all)", 0, two_to(40), "ns"),
    number("timeline-capacity", &recording_spec::timeline_capacity,
           "events per thread before recording stops", 1, two_to(28), "events"),
    read_by(&threads_begin_epochs,
            option_spec{
                .name = "garbage-series",
                .field = &recording_spec::garbage_series_path,
                .help = "record to FILE each thread's unreclaimed nodes at every epoch it begins "
                        "(Epochs paper, Figure 4)",
                .metavar = "FILE"}),
    number("sample-ms", &recording_spec::sample_ms,
           "sample RSS, allocator bytes and garbage every N ms into the JSON", 0, 3600000, "ms"),
};

// A reclaimer parameter is written into the domain's configuration, and
// only a reclaimer parameter (the text options of target domain, --free and
// --fence, parse_command_line writes there). Checked in the builds without
// sanitizers: GCC 12's -fsanitize=undefined (on in the asan preset, with no
// macro of its own) makes comparing a pointer to member or to function with
// null a non-constant expression, so smrbench did not compile there; the
// release build, which every CI run makes, still checks it.
#if !defined(__SANITIZE_ADDRESS__)
static_assert(std::ranges::all_of(table, [](const option_spec& spec) {
    return std::visit(
        [&]<class Field>(const Field& field) {
            if constexpr (std::is_same_v<Field, text_option>) {
                return true;
            } else {
                return (spec.target == option_target::domain) == field.in_domain();
            }
        },
        spec.field);
}));
// A per-reclaimer default is a reclaimer's tuning, held in a std::uint64_t
// (apply_reclaimer_defaults writes no other type).
static_assert(std::ranges::all_of(table, [](const option_spec& spec) {
    return spec.default_for == nullptr ||
           (spec.read_by != nullptr &&
            std::holds_alternative<config_member<std::uint64_t>>(spec.field));
}));
#endif

std::string json_key(std::string_view name) {
    std::string key(name);
    for (char& ch : key) {
        if (ch == '-') ch = '_';
    }
    return key;
}

// The wording of these refusals is also smrlab's for a grid value
// (python/src/smrlab/grid.py); tests/python/test_grid.py compares the two.
std::string out_of_range(const std::string& minimum, const std::string& maximum,
                         const std::string& text) {
    return "expected a value in [" + minimum + ", " + maximum + "], got '" + text + "'";
}

/// A bound as the description prints it: an integer without a fraction.
std::string bound_text(double bound) {
    if (bound == std::floor(bound) && std::abs(bound) < two_to(63))
        return std::to_string(static_cast<std::int64_t>(bound));
    std::array<char, 32> buffer{};
    const auto [end, ec] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), bound);
    return std::string(buffer.data(), ec == std::errc() ? end : buffer.data());
}

/// The refusal of a number outside what `spec` takes: its own range when it
/// has one (never the C type's, which says nothing to a user), else the
/// type's.
template <class T>
std::string outside(const option_spec& spec, const std::string& text) {
    if (spec.ranged) return out_of_range(bound_text(spec.minimum), bound_text(spec.maximum), text);
    return out_of_range(std::to_string(std::numeric_limits<T>::min()),
                        std::to_string(std::numeric_limits<T>::max()), text);
}

/// Numbers are decimal and nothing else: CLI11 alone reads integers with
/// base 0 (010 is 8, 0x10 is 16) and wraps negative values into unsigned
/// ones (--ops -1 is 2^64 - 1), and takes nan and inf for a double. Then a
/// ranged option's bounds. (No validator name: --help shows the range as the
/// option's type instead of CLI11's tags.)
template <class T>
CLI::Validator strict_number(const option_spec& spec) {
    return CLI::Validator(
        [spec](std::string& text) -> std::string {
            const char* const first = text.data();
            const char* const last = first + text.size();
            T value{};
            if constexpr (std::is_floating_point_v<T>) {
                const auto [end, ec] = std::from_chars(first, last, value);
                if (text.empty() || ec != std::errc() || end != last || !std::isfinite(value))
                    return "expected a finite decimal number, got '" + text + "'";
            } else {
                const std::string_view digits(
                    text.starts_with('-') ? first + 1 : first,
                    text.starts_with('-') ? text.size() - 1 : text.size());
                const bool decimal = !digits.empty() &&
                                     std::all_of(digits.begin(), digits.end(),
                                                 [](char ch) { return ch >= '0' && ch <= '9'; }) &&
                                     (digits.size() == 1 || digits.front() != '0');
                if (!decimal) {
                    return "expected a decimal integer (no leading zero, octal or hex), got '" +
                           text + "'";
                }
                if (std::is_unsigned_v<T> && text.starts_with('-'))
                    return "expected a non-negative integer, got '" + text + "'";
                const auto [end, ec] = std::from_chars(first, last, value);
                if (ec != std::errc() || end != last) return outside<T>(spec, text);
            }
            if (spec.ranged &&
                !(value >= static_cast<T>(spec.minimum) && value <= static_cast<T>(spec.maximum))) {
                return outside<T>(spec, text);
            }
            return {};
        },
        "");
}

/// What --help shows as a number option's type: its range (1..4096), or N.
std::string number_type_name(const option_spec& spec) {
    if (!spec.ranged) return "N";
    return bound_text(spec.minimum) + ".." + bound_text(spec.maximum);
}

/// A text option's choices, space-separated in the table.
std::vector<std::string_view> words(std::string_view text) {
    std::vector<std::string_view> out;
    while (!text.empty()) {
        const std::size_t end = std::min(text.find(' '), text.size());
        out.push_back(text.substr(0, end));
        text.remove_prefix(std::min(end + 1, text.size()));
    }
    return out;
}

/// A text option's fixed set of names (space-separated).
CLI::Validator one_of(std::string_view choices) {
    return CLI::Validator(
        [choices](std::string& text) -> std::string {
            std::string listed;
            for (std::string_view name : words(choices)) {
                if (name == text) return {};
                listed.append(listed.empty() ? "" : ", ").append(name);
            }
            return "expected one of " + listed + ", got '" + text + "'";
        },
        "");
}

/// The readers of a per-reclaimer default grouped by value, most readers
/// first: "default 32768; 2048 for nbr, nbrplus".
std::string defaults_text(const option_spec& spec) {
    std::map<std::uint64_t, std::string> by_value;
    for (const smr::reclaimer_traits& reclaimer : reclaimers()) {
        if (!spec.read_by(reclaimer)) continue;
        std::string& names = by_value[spec.default_for(reclaimer)];
        names.append(names.empty() ? "" : ", ").append(reclaimer.name);
    }
    std::vector<std::pair<std::uint64_t, std::string>> groups(by_value.begin(), by_value.end());
    std::ranges::stable_sort(groups, [](const auto& a, const auto& b) {
        return std::ranges::count(a.second, ',') > std::ranges::count(b.second, ',');
    });
    std::string out = "default " + std::to_string(groups.front().first);
    for (std::size_t i = 1; i < groups.size(); ++i) {
        out += "; " + std::to_string(groups[i].first) + " for " + groups[i].second;
    }
    return out;
}

/// What --help and --list --json say of `spec`: its help, after the
/// reclaimers that read it for a reclaimer's tuning, and before the
/// defaults of each for a per-reclaimer default.
std::string help_of(const option_spec& spec) {
    std::string out = spec.read_by == nullptr ? std::string(spec.help)
                                              : readers_of(spec) + ": " + std::string(spec.help);
    if (spec.default_for != nullptr) out += " (" + defaults_text(spec) + ")";
    return out;
}

/// Adds one number, flag or string option writing `config.*member`.
template <class T>
void add_member(CLI::App& app, const option_spec& spec, T& value) {
    const std::string flag = "--" + std::string(spec.name);
    const std::string help = help_of(spec);
    if constexpr (std::is_same_v<T, bool>) {
        app.add_flag(flag, value, help);
    } else {
        CLI::Option* option = app.add_option(flag, value, help);
        if constexpr (std::is_arithmetic_v<T>) {
            option->check(strict_number<T>(spec));
            option->type_name(number_type_name(spec));
        } else {
            option->type_name(std::string(spec.metavar));
        }
        // The default was captured when the option was added (the app's
        // option_defaults): a derived one shows none rather than 0.
        if (spec.derived_default) option->always_capture_default(false)->default_str("");
    }
}

}  // namespace

std::span<const option_spec> option_table() { return table; }

void apply_reclaimer_defaults(bench_config& config) {
    const smr::reclaimer_traits& reclaimer = config.combo->reclaimer;
    for (const option_spec& spec : table) {
        if (spec.default_for == nullptr) continue;
        std::visit(
            [&]<class Field>(const Field& field) {
                if constexpr (std::is_same_v<Field, config_member<std::uint64_t>>) {
                    std::uint64_t& value = field.of(config);
                    if (value == 0) value = spec.default_for(reclaimer);
                }
            },
            spec.field);
    }
}

std::vector<std::string> readers(const option_spec& spec) {
    std::vector<std::string> out;
    if (spec.read_by == nullptr) return out;
    for (const smr::reclaimer_traits& reclaimer : reclaimers()) {
        if (spec.read_by(reclaimer)) out.emplace_back(reclaimer.name);
    }
    return out;
}

std::string readers_of(const option_spec& spec) {
    std::string out;
    for (const std::string& name : readers(spec)) out += (out.empty() ? "" : ", ") + name;
    return out;
}

void add_table_options(CLI::App& app, bench_config& config, option_texts& texts,
                       bench_command command) {
    for (const option_spec& spec : table) {
        if (!belongs_to(spec.commands, command)) continue;
        std::visit(
            [&]<class Field>(const Field& field) {
                if constexpr (std::is_same_v<Field, text_option>) {
                    std::string& text = texts[spec.name] = std::string(field.default_text);
                    add_member(app, spec, text);
                    if (!field.choices.empty()) {
                        std::string choices(field.choices);
                        std::replace(choices.begin(), choices.end(), ' ', '|');
                        app.get_option("--" + std::string(spec.name))
                            ->check(one_of(field.choices))
                            ->type_name(choices);
                    }
                } else {
                    add_member(app, spec, field.of(config));
                }
            },
            spec.field);
    }
}

std::string_view target_name(option_target target) {
    switch (target) {
        case option_target::benchmark:
            return "benchmark";
        case option_target::domain:
            return "domain";
        case option_target::output:
            return "output";
    }
    return "benchmark";
}

json options_description() {
    const bench_config defaults{};
    json out = json::array();
    for (const option_spec& spec : table) {
        json row{{"name", spec.name},
                 {"flag", "--" + std::string(spec.name)},
                 {"key", json_key(spec.name)},
                 {"target", target_name(spec.target)},
                 {"unit", spec.unit},
                 {"help", help_of(spec)},
                 {"minimum", spec.ranged ? json(spec.minimum) : json(nullptr)},
                 {"maximum", spec.ranged ? json(spec.maximum) : json(nullptr)},
                 {"choices", nullptr}};
        std::visit(
            [&]<class Field>(const Field& field) {
                if constexpr (std::is_same_v<Field, text_option>) {
                    row["type"] = "str";
                    row["default"] = field.default_text;
                    if (!field.choices.empty())
                        row["choices"] = words(field.choices);  // an array of names
                } else {
                    using T = std::remove_cvref_t<decltype(field.of(defaults))>;
                    row["type"] = std::is_same_v<T, bool>          ? "bool"
                                  : std::is_same_v<T, std::string> ? "str"
                                  : std::is_floating_point_v<T>    ? "float"
                                                                   : "int";
                    row["default"] = field.of(defaults);
                    if (spec.ranged && std::is_integral_v<T>) {
                        row["minimum"] = static_cast<std::int64_t>(spec.minimum);
                        row["maximum"] = static_cast<std::int64_t>(spec.maximum);
                    } else if (std::is_unsigned_v<T> && !std::is_same_v<T, bool>) {
                        // Unranged, but unsigned: its type is its range.
                        row["minimum"] = 0;
                        row["maximum"] = std::numeric_limits<T>::max();
                    }
                }
            },
            spec.field);
        if (spec.derived_default) row["default"] = nullptr;
        if (spec.default_for != nullptr) {
            json defaults = json::object();
            for (const smr::reclaimer_traits& reclaimer : reclaimers()) {
                if (spec.read_by(reclaimer)) defaults[reclaimer.name] = spec.default_for(reclaimer);
            }
            row["default_by_reclaimer"] = std::move(defaults);
        }
        json commands = json::array();
        for (auto command : {bench_command::set, bench_command::threadtest, bench_command::layout,
                             bench_command::stamp}) {
            if (belongs_to(spec.commands, command)) commands.push_back(to_string(command));
        }
        row["commands"] = std::move(commands);
        // A reclaimer's tuning: the reclaimers that read it (smrlab gives it to their runs only).
        row["reclaimers"] = spec.read_by == nullptr ? json(nullptr) : json(readers(spec));
        out.push_back(std::move(row));
    }
    return out;
}

json subcommand_json(const bench_config& config, const allocator_identity& allocator) {
    return json{
        {"smrbench_version", 1},
        {"benchmark", to_string(config.command)},
        {"config", table_config_json(config)},
        {"allocator",
         {{"name", allocator.name},
          {"version", allocator.version},
          {"library", allocator.library}}},
        {"machine", this_machine_json()},
        {"build", build_json()},
        {"numa", numa_json(config.numa_result)},
        {"placement", placement_json(config.pin, config.threads)},
    };
}

json subcommand_trials_json(bool validated, std::uint64_t peak_rss_bytes, int median_trial,
                            json trials) {
    return json{{"validated", validated},
                {"status", "ok"},
                {"peak_rss_bytes", peak_rss_bytes},
                {"median_trial", median_trial},
                {"trials", std::move(trials)}};
}

json table_config_json(const bench_config& config) {
    const smr::reclaimer_traits* reclaimer =
        config.combo != nullptr ? &config.combo->reclaimer : nullptr;
    json out = json::object();
    for (const option_spec& spec : table) {
        if (spec.target == option_target::output || !belongs_to(spec.commands, config.command))
            continue;
        const std::string key = json_key(spec.name);
        if (spec.read_by != nullptr && reclaimer != nullptr && !spec.read_by(*reclaimer)) {
            out[key] = nullptr;  // a tuning this run's reclaimer does not read
        } else if (spec.json != nullptr) {
            out[key] = spec.json(config);
        } else {
            std::visit(
                [&]<class Field>(const Field& field) {
                    if constexpr (!std::is_same_v<Field, text_option>) out[key] = field.of(config);
                },
                spec.field);
        }
    }
    return out;
}

}  // namespace smrbench
