#include "options.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "build_info.hpp"
#include "faults.hpp"
#include "option_table.hpp"
#include "output_file.hpp"
#include "recording.hpp"
#include "registry.hpp"
#include "smr/core/mutant.hpp"
#include "smr/reclaim/nbr.hpp"

namespace smrbench {
namespace {

/// Thrown for input smrbench refuses; its message is the one stderr line.
struct bad_input : std::runtime_error {
    using std::runtime_error::runtime_error;
};

std::string join(const std::vector<std::string_view>& names) {
    std::string out;
    for (const auto& n : names) {
        if (!out.empty()) out += ", ";
        out += n;
    }
    return out;
}

/// The structures that declare `capability`, for the refusal of an option
/// that only they read.
std::string structures_with(bool smr::ds_traits::*capability) {
    std::vector<std::string_view> names;
    for (const auto& c : combinations()) {
        const std::string_view name = c.structure.name;
        if (c.structure.*capability && std::find(names.begin(), names.end(), name) == names.end()) {
            names.push_back(name);
        }
    }
    return join(names);
}

/// Whether `app` has the option `flag` and the command line gave it.
bool given(const CLI::App& app, const std::string& flag) {
    const CLI::Option* option = app.get_option_no_throw(flag);
    return option != nullptr && option->count() != 0;
}

/// A reclaimer's tuning given with a reclaimer that does not read it would
/// change nothing, so it is refused, as --free-k is without amortized free,
/// naming the reclaimers that read it (smrlab gives a grid's tunings to their
/// runs only).
void check_reclaimer_tunings(const CLI::App& app, const bench_config& c) {
    const smr::reclaimer_traits& reclaimer = c.combo->reclaimer;
    for (const option_spec& spec : option_table()) {
        const std::string flag = "--" + std::string(spec.name);
        if (spec.read_by == nullptr || spec.read_by(reclaimer) || !given(app, flag) ||
            SMR_MUTANT("smrbench_accepts_unread_tunings")) {
            continue;
        }
        throw bad_input(flag + " is read only by " + readers_of(spec) + ", and --reclaimer " +
                        c.reclaimer + " would ignore it: leave it out");
    }
    // The watermarks of nbrplus and the POP schemes (nbr reads the high one
    // alone, as its bag size).
    if (reclaimer.reads.nbr_low_watermark) {
        const smr::domain_config& d = c.domain;
        try {
            (void)smr::detail::make_watermarks(d.nbr_low_watermark, d.nbr_high_watermark,
                                               d.bag_threshold, c.reclaimer.c_str());
        } catch (const std::invalid_argument&) {
            const std::uint64_t high =
                d.nbr_high_watermark != 0 ? d.nbr_high_watermark : d.bag_threshold;
            throw bad_input("--nbr-low-watermark " + std::to_string(d.nbr_low_watermark) +
                            " must be below the high watermark " + std::to_string(high));
        }
    }
}

/// --timeline and --garbage-series: each given one names a file (an empty
/// path would write nothing, silently), each trial's file can be written and
/// replaced (bench/output_file.hpp), and the two are not one file. Checked
/// before anything runs, so that a bad output costs no trial.
void check_outputs(const CLI::App& app, const bench_config& c) {
    const std::pair<const char*, const std::string*> outputs[] = {
        {"--timeline", &c.recording.timeline_path},
        {"--garbage-series", &c.recording.garbage_series_path}};
    for (const auto& [flag, path] : outputs) {
        if (given(app, flag) && path->empty()) {
            throw bad_input(std::string(flag) +
                            ": an empty path (give a file name, or leave the option out)");
        }
        if (path->empty()) continue;
        for (int trial = 0; trial < std::max(c.trials, 1); ++trial) {
            const std::string file = per_trial_path(*path, trial, c.trials);
            if (const std::string reason = output_problem(file); !reason.empty()) {
                throw bad_input(std::string(flag) + " " + file + ": " + reason);
            }
        }
    }
    if (!c.recording.timeline_path.empty() && !c.recording.garbage_series_path.empty()) {
        std::error_code timeline_error, series_error;
        const auto timeline =
            std::filesystem::weakly_canonical(c.recording.timeline_path, timeline_error);
        const auto series =
            std::filesystem::weakly_canonical(c.recording.garbage_series_path, series_error);
        if (!timeline_error && !series_error && timeline == series) {
            throw bad_input("--timeline and --garbage-series name one file, " +
                            c.recording.timeline_path);
        }
    }
}

/// Options one of which would silently lose to the other are refused, as
/// --on-empty without a pool is: a run must do what its command line says.
void check_option_pairs(const CLI::App& app, const bench_config& c, const option_texts& texts) {
    if (given(app, "--ops") && c.ops_per_thread != 0 && given(app, "--duration")) {
        throw bad_input("--ops " + std::to_string(c.ops_per_thread) +
                        " runs a fixed number of operations per thread and --duration a fixed "
                        "time: give one of them");
    }
    const auto free = texts.find("free");
    for (const char* flag : {"--free-k", "--free-catchup-div"}) {
        if (given(app, flag) && free != texts.end() && free->second != "amortized") {
            throw bad_input(std::string(flag) + " tunes amortized freeing, and --free is " +
                            free->second + " (give --free amortized, or leave " + flag + " out)");
        }
    }
}

std::string one_line(std::string text) {
    std::replace(text.begin(), text.end(), '\n', ' ');
    while (!text.empty() && text.back() == ' ') text.pop_back();
    return text;
}

/// The subcommands of `app` that take option `flag`, e.g. "threadtest and layout".
std::string subcommands_with(const CLI::App& app, const std::string& flag) {
    std::vector<std::string_view> names;
    for (const CLI::App* sub : app.get_subcommands({})) {
        if (sub->get_option_no_throw(flag) != nullptr) names.push_back(sub->get_name());
    }
    std::string out;
    for (std::size_t i = 0; i < names.size(); ++i) {
        out += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + std::string(names[i]);
    }
    return out;
}

/// What a value of an option whose --help type is `type` looks like.
std::string value_kind(const std::string& type) {
    if (type.find("..") != std::string::npos) return " in " + type;
    if (type == "FILE") return " (a file name)";
    if (type == "N") return " (a number)";
    if (type.find('|') != std::string::npos) return " (" + type + ")";
    return " (a name)";
}

/// CLI11's refusal in the words of the rest of smrbench's: the option first,
/// then what it expected, and where an option misplaced before a subcommand's
/// name belongs. (Plain string matching: <regex> trips GCC 12's false
/// -Wmaybe-uninitialized under the sanitizers, bug 105562.)
std::string explain(const CLI::ParseError& error, const CLI::App& app) {
    const std::string text = one_line(error.what());
    const std::size_t colon = text.find(": ");
    const std::string name = colon == std::string::npos ? "" : text.substr(0, colon);
    if (name.starts_with("--") && text.ends_with(" missing")) {  // "--x: 1 required T missing"
        const std::size_t type_at = text.find(" required ");
        if (type_at != std::string::npos) {
            const std::size_t from = type_at + std::strlen(" required ");
            const std::string type = text.substr(from, text.size() - from - 8);
            return name + ": expected a value" + value_kind(type);
        }
    }
    if (const std::size_t at = text.find(" but received ");
        name.starts_with("--") && text.find(": At Most ") == colon && at != std::string::npos) {
        return name + " is given " + text.substr(at + 14) + " times: give it once";
    }
    const std::string extras = "not expected: ";
    if (const std::size_t at = text.find(extras);
        text.starts_with("The following argument") && at != std::string::npos) {
        std::vector<std::string> words;  // CLI11 lists them last first
        std::istringstream in(text.substr(at + extras.size()));
        for (std::string word; in >> word;) words.insert(words.begin(), word);
        for (const std::string& word : words) {
            if (!word.starts_with("--")) continue;
            const std::string flag = word.substr(0, word.find('='));
            if (const std::string owners = subcommands_with(app, flag); !owners.empty()) {
                return flag + " is an option of " + owners +
                       ", not of the set benchmark: give it after the subcommand's name "
                       "(smrbench " +
                       owners.substr(0, owners.find(' ')) + " " + flag + " ...)";
            }
        }
        std::string listed;
        for (const std::string& word : words) listed += (listed.empty() ? "" : " ") + word;
        return std::string("unexpected argument") + (words.size() > 1 ? "s" : "") + ": " + listed +
               " (smrbench --help lists the options)";
    }
    return text;
}

void parse_prefill(const std::string& text, bench_config& config) {
    if (text == "auto") {
        config.workload.prefill = prefill_mode::automatic;
    } else if (text == "none") {
        config.workload.prefill = prefill_mode::none;
    } else {
        std::int64_t count = -1;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), count);
        if (ec != std::errc() || end != text.data() + text.size() || count < 0) {
            throw bad_input("--prefill: expected auto, none or a key count, got '" + text + "'");
        }
        if (count > config.workload.key_range) {
            throw bad_input("--prefill: " + text + " keys do not fit in --key-range " +
                            std::to_string(config.workload.key_range));
        }
        config.workload.prefill = prefill_mode::count;
        config.workload.prefill_count = count;
    }
}

/// A prefill whose nodes alone (a lower bound: malloc chunks of the nodes,
/// nothing else) need more than the memory available now would grow for
/// minutes and then fail.
/// Bytes of memory available now, or less if the address space this process
/// may use is limited (ulimit -v); 0 when unknown.
double available_memory() {
    const long pages = sysconf(_SC_AVPHYS_PAGES);
    const long page_size = sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || page_size <= 0) return 0;
    double memory = static_cast<double>(pages) * static_cast<double>(page_size);
    rlimit limit{};
    if (::getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
        memory = std::min(memory, static_cast<double>(limit.rlim_cur));
    }
    return memory;
}

void check_prefill_fits(const bench_config& config, const combination& combo) {
    const double memory = available_memory();
    if (memory == 0) return;  // unknown: nothing to compare with
    const std::int64_t keys = config.workload.prefill == prefill_mode::count
                                  ? config.workload.prefill_count
                                  : config.workload.prefill_target();
    const double needed =
        static_cast<double>(keys) * static_cast<double>(bytes_per_key(combo.structure));
    if (needed <= memory) return;
    char line[256];
    std::snprintf(line, sizeof line,
                  "--key-range %lld: a prefill of %lld keys needs at least %.1f GiB of %s nodes, "
                  "more than the %.1f GiB of memory available",
                  static_cast<long long>(config.workload.key_range), static_cast<long long>(keys),
                  needed / (1 << 30), std::string(combo.structure.name).c_str(),
                  memory / (1 << 30));
    throw bad_input(line);
}

allocator_kind allocator_from_text(const std::string& alloc) {
    const auto kind = parse_allocator(alloc);
    if (!kind) {
        throw bad_input("--alloc: unknown allocator '" + alloc +
                        "' (known: " + join(allocator_names()) + ")");
    }
    return *kind;
}

/// Resolves --ds and --reclaimer to the pair compiled in, once: everything
/// after reads config.combo instead of looking the names up again.
void resolve_pair(bench_config& config) {
    if (!is_ds_name(config.ds)) {
        throw bad_input("--ds: unknown data structure '" + config.ds +
                        "' (known: " + join(ds_names()) + ")");
    }
    if (!is_reclaimer_name(config.reclaimer)) {
        std::vector<std::string_view> names;
        for (const auto& r : reclaimers()) names.push_back(r.name);
        throw bad_input("--reclaimer: unknown reclaimer '" + config.reclaimer +
                        "' (known: " + join(names) + ")");
    }
    config.combo = find_combination(config.ds, config.reclaimer);
    if (config.combo == nullptr) {
        throw bad_input("--reclaimer " + config.reclaimer + " is not available with --ds " +
                        config.ds);
    }
}

/// The pair runs (safely, or with --allow-unsafe), and each structure option
/// given is one the structure has.
void check_pair(const bench_config& config, const std::string& free, const std::string& alloc,
                const std::string& pin, bench_config& out) {
    const combination* combo = config.combo;
    if (combo->run == nullptr) {
        throw bad_input(config.reclaimer + " cannot run with " + config.ds + ": " +
                        std::string(combo->compat.reason));
    }
    if (!combo->compat.safe && !config.allow_unsafe) {
        throw bad_input(config.reclaimer + " is unsafe with " + config.ds + ": " +
                        std::string(combo->compat.reason) + " (--allow-unsafe runs it anyway)");
    }
    const smr::ds_traits& structure = combo->structure;
    if (config.restart_from_head && !structure.restart_from_head_option) {
        throw bad_input("--restart-from-head applies only to " +
                        structures_with(&smr::ds_traits::restart_from_head_option) + " (--ds " +
                        config.ds + " has no restart policy to choose)");
    }
    if (config.workload.alternate && structure.is_queue) {
        throw bad_input("--alternate: --ds " + config.ds +
                        " is a queue, whose erase (dequeue) takes no key");
    }
    if (structure.is_queue && config.workload.contains_pct() > 0) {
        throw bad_input("--ds " + config.ds + " is a queue and has no contains operation, but " +
                        "--insert " + std::to_string(config.workload.insert_pct) + " and --erase " +
                        std::to_string(config.workload.erase_pct) + " leave " +
                        std::to_string(config.workload.contains_pct()) +
                        "% contains (insert = enqueue, erase = dequeue: make them sum to 100)");
    }
    if (config.workload.stall_hold && !structure.holds_first) {
        throw bad_input("--stall-hold applies only to " +
                        structures_with(&smr::ds_traits::holds_first) + " (--ds " + config.ds +
                        " has no first node to hold)");
    }
    check_prefill_fits(config, *combo);
    if (config.buckets != 0 && !structure.buckets_option) {
        throw bad_input("--buckets applies only to " +
                        structures_with(&smr::ds_traits::buckets_option) + " (--ds " + config.ds +
                        " has no buckets)");
    }
    // --free, --pin and --on-empty: the option table's choices were checked on parsing.
    out.domain.free.mode = smr::parse_free_mode(free).value();
    out.alloc = allocator_from_text(alloc);
    out.pin = parse_pin_policy(pin).value();
}

/// The STM's ownership-record table is 2^--ort-bits versioned locks and as
/// many owner words, 16 bytes a lock, all written when it is made
/// (smr::stm::orec_table): at 30 bits, 16 GiB before the first operation.
void check_orec_table_fits(const bench_config& config) {
    const double memory = available_memory();
    const double needed = std::ldexp(16.0, static_cast<int>(config.ort_bits));
    if (memory == 0 || needed <= memory) return;
    char line[256];
    std::snprintf(line, sizeof line,
                  "--ort-bits %u: the STM's table of 2^%u locks needs %.1f GiB, more than the "
                  "%.1f GiB of memory available",
                  config.ort_bits, config.ort_bits, needed / (1 << 30), memory / (1 << 30));
    throw bad_input(line);
}

/// --ort-bits and --ort-shift: only a transactional structure has an STM;
/// and a pool cannot bound its nodes.
void check_stm_options(const CLI::App& app, const bench_config& config) {
    const combination* combo = config.combo;
    if (combo->structure.transactional) check_orec_table_fits(config);
    for (const char* flag : {"--ort-bits", "--ort-shift"}) {
        if (app.count(flag) != 0 && !combo->structure.transactional) {
            throw bad_input(std::string(flag) + " applies only to " +
                            structures_with(&smr::ds_traits::transactional) + " (--ds " +
                            config.ds + " runs on no STM)");
        }
    }
    if (config.domain.count_remote_frees && combo->structure.transactional) {
        throw bad_input("--count-remote-frees counts the nodes a reclaimer allocates, and --ds " +
                        config.ds +
                        "'s nodes are its STM's plain malloc blocks, freed in batches of "
                        "pointers: it has none to count");
    }
    if (config.pool_nodes != 0 && combo->structure.transactional) {
        throw bad_input("--pool-nodes bounds the nodes a reclaimer allocates, and --ds " +
                        config.ds +
                        "'s nodes are its STM's plain malloc blocks (the allocator under "
                        "study): run it without a pool");
    }
}

/// --fence asymmetric, given, where this process cannot use membarrier is
/// refused (left out, the run falls back to symmetric fences and says so).
void check_fence(const CLI::App& app, const std::string& fence, bench_config& config) {
    config.domain.fence = smr::parse_fence_mode(fence).value();  // a choice of the table's
    if (given(app, "--fence") && config.domain.fence == smr::fence_mode::asymmetric &&
        !smr::core::asymmetric_fence_available()) {
        throw bad_input(
            "--fence asymmetric: this process cannot use membarrier's private expedited "
            "command (Linux before 4.14, or a seccomp filter): give --fence symmetric, or leave "
            "--fence out to fall back to it");
    }
}

void check_pool(bool on_empty_given, const std::string& on_empty, bench_config& config) {
    if (on_empty_given && config.pool_nodes == 0) {
        throw bad_input("--on-empty " + on_empty +
                        " applies only with a pool: give --pool-nodes N (N > 0)");
    }
    config.on_empty = smr::alloc::parse_on_empty(on_empty).value();
}

/// threadtest and layout: the blocks held at once must fit in memory.
void check_blocks_fit(const bench_config& config) {
    // layout keeps three threads' blocks (two in turns, then one alone);
    // threadtest's rounds keep --objects blocks per thread and a pointer to each.
    const bool layout = config.command == bench_command::layout;
    const double blocks =
        layout ? 3.0 * static_cast<double>(config.blocks)
               : static_cast<double>(std::max<std::uint64_t>(config.objects, 1)) * config.threads;
    const double per_block =
        static_cast<double>(config.block_size) + (layout ? 0.0 : sizeof(void*));
    const double needed = blocks * per_block;
    const double memory = available_memory();
    if (memory == 0 || needed <= memory) return;
    char line[256];
    std::snprintf(line, sizeof line,
                  "%s: %.0f blocks of %llu bytes held at once need %.1f GiB, more than the %.1f "
                  "GiB of memory available",
                  std::string(to_string(config.command)).c_str(), blocks,
                  static_cast<unsigned long long>(config.block_size), needed / (1 << 30),
                  memory / (1 << 30));
    throw bad_input(line);
}

/// A subcommand's options come after its name: one given before it is the
/// set benchmark's, even when the subcommand has an option of that name.
void check_no_set_options(const CLI::App& app, bench_command command) {
    for (const CLI::Option* option : app.get_options()) {
        if (option->count() == 0) continue;
        throw bad_input(option->get_name() + " before '" + std::string(to_string(command)) +
                        "' is an option of the set benchmark; give " +
                        std::string(to_string(command)) + "'s options after its name (smrbench " +
                        std::string(to_string(command)) + " --help)");
    }
}

void check_allocator_available(allocator_kind kind);

/// --prefill-by: auto is each paper's choice, the main thread for the allocator/STM study's
/// structures and the workers for setbench's. A queue's prefill tags items by producer, which
/// only the workers are.
void parse_prefill_by(const std::string& text, bench_config& c) {
    const smr::ds_traits& structure = c.combo->structure;
    c.workload.prefill_by_main = text == "main" || (text == "auto" && structure.transactional);
    if (c.workload.prefill_by_main && structure.is_queue) {
        throw bad_input("--prefill-by main: " + c.ds +
                        "'s items are tagged by the worker that enqueues them; its prefill is "
                        "the workers'");
    }
}
void check_thread_limit(const bench_config& c);

/// threadtest and layout: their own options are the table's, range-checked.
void parse_allocator_command(bench_config& c, const option_texts& texts) {
    c.alloc = allocator_from_text(texts.at("alloc"));
    c.pin = parse_pin_policy(texts.at("pin")).value();
    c.numa = parse_numa_policy(texts.at("numa")).value();
    check_allocator_available(c.alloc);
    check_blocks_fit(c);
    if (c.command == bench_command::threadtest) check_thread_limit(c);  // layout runs two
}

/// The threads a run starts must fit under the user's process limit
/// (ulimit -u, which counts threads), or the run would fail part-way. Only
/// the certain failure is refused: the limit counts the user's other
/// processes too, which a thread that still cannot start reports then.
/// Root, which the kernel does not hold to the limit, is not checked.
void check_thread_limit(const bench_config& c) {
    rlimit limit{};
    if (::geteuid() == 0 || ::getrlimit(RLIMIT_NPROC, &limit) != 0 ||
        limit.rlim_cur == RLIM_INFINITY) {
        return;
    }
    // With the main thread; the set benchmark adds its sampler and any
    // stalled thread.
    const bool set = c.command == bench_command::set;
    const std::uint64_t needed =
        static_cast<std::uint64_t>(c.threads) + 1 + (set ? 1 + (c.workload.stall ? 1 : 0) : 0);
    if (needed <= limit.rlim_cur) return;
    throw bad_input("--threads " + std::to_string(c.threads) + ": the run needs " +
                    std::to_string(needed) + " threads, but ulimit -u allows this user " +
                    std::to_string(limit.rlim_cur) + " processes and threads in all");
}

void check_allocator_available(allocator_kind kind) {
    if (kind == allocator_kind::glibc) return;
    if (!allocator_selection_supported()) {
        throw bad_input("--alloc " + std::string(to_string(kind)) +
                        ": allocator selection is unavailable in sanitizer builds (the sanitizer "
                        "replaces malloc); use a release build");
    }
    if (!find_allocator_library(kind)) {
        throw bad_input("--alloc " + std::string(to_string(kind)) +
                        ": its library (Debian package " + std::string(debian_package(kind)) +
                        ") is not installed; run scripts/bootstrap");
    }
}

}  // namespace

parse_outcome parse_command_line(int argc, char** argv) {
    parse_outcome outcome;
    bench_config& c = outcome.config;
    option_texts texts;

    CLI::App app{
        "smrbench: run one data structure x reclaimer x allocator x workload, validate every "
        "trial.\n"
        "Names of data structures and reclaimers: smrbench --list."};
    app.option_defaults()->always_capture_default();
    // The VERSION file's, through CMake (bench/CMakeLists.txt), and the build's commit.
    app.set_version_flag("--version", version_line());
    add_table_options(app, c, texts, bench_command::set);
    add_fault_options(app, c);
    CLI::App* threadtest = app.add_subcommand(
        "threadtest",
        "Hoard's allocator microbenchmark: every thread allocates blocks of --block-size bytes "
        "and frees them, as fast as it can; reports malloc/free pairs per second");
    add_table_options(*threadtest, c, texts, bench_command::threadtest);
    CLI::App* layout = app.add_subcommand(
        "layout",
        "where the allocator places consecutive blocks of --block-size bytes, for one thread and "
        "for two taking turns, and which of them share an STM versioned lock");
    add_table_options(*layout, c, texts, bench_command::layout);
    add_layout_fault_options(*layout);
    CLI::App* stamp = app.add_subcommand(
        "stamp",
        "a STAMP application on smrlab's STM (Minh et al., IISWC 2008), verified after every "
        "trial; reports the clients' time");
    add_table_options(*stamp, c, texts, bench_command::stamp);
    app.require_subcommand(0, 1);

    try {
        app.parse(argc, argv);
        if (stamp->parsed()) {
            c.command = bench_command::stamp;
            check_no_set_options(app, c.command);
            c.app = texts.at("app");  // its choices checked on parsing
            c.alloc = allocator_from_text(texts.at("alloc"));
            c.numa = parse_numa_policy(texts.at("numa")).value();
            check_allocator_available(c.alloc);
            check_thread_limit(c);
            return outcome;
        }
        if (threadtest->parsed() || layout->parsed()) {
            c.command = threadtest->parsed() ? bench_command::threadtest : bench_command::layout;
            check_no_set_options(app, c.command);
            check_option_pairs(threadtest->parsed() ? *threadtest : *layout, c, texts);
            parse_allocator_command(c, texts);
            return outcome;
        }
        if (c.output.markdown && !c.output.list) throw bad_input("--markdown: only with --list");
        if (c.output.list) return outcome;
        if (c.workload.stall_hold) c.workload.stall = true;
        check_option_pairs(app, c, texts);
        resolve_pair(c);
        apply_reclaimer_defaults(c);
        check_reclaimer_tunings(app, c);
        if (c.workload.insert_pct + c.workload.erase_pct > 100) {
            throw bad_input("--insert " + std::to_string(c.workload.insert_pct) + " + --erase " +
                            std::to_string(c.workload.erase_pct) + " exceed 100 percent");
        }
        if (c.workload.alternate && c.workload.insert_pct != c.workload.erase_pct) {
            throw bad_input(
                "--alternate takes turns between inserts and erases: give equal "
                "--insert and --erase (their sum is the update percentage), not " +
                std::to_string(c.workload.insert_pct) + " and " +
                std::to_string(c.workload.erase_pct));
        }
        if (const std::string problem = smr::signal_problem(c.domain.nbr_signal);
            !problem.empty()) {
            throw bad_input("--signal: " + problem);
        }
        if (const std::string problem = smr::signal_problem(c.domain.pop_signal);
            !problem.empty()) {
            throw bad_input("--pop-signal: " + problem);
        }
        if (c.workload.key_range == 0) c.workload.key_range = c.combo->default_key_range;
        parse_prefill(texts.at("prefill"), c);
        check_pair(c, texts.at("free"), texts.at("alloc"), texts.at("pin"), c);
        c.numa = parse_numa_policy(texts.at("numa")).value();  // its choices checked on parsing
        parse_prefill_by(texts.at("prefill-by"), c);
        check_fence(app, texts.at("fence"), c);
        check_stm_options(app, c);
        check_pool(app.count("--on-empty") != 0, texts.at("on-empty"), c);
        check_allocator_available(c.alloc);
        check_thread_limit(c);
        check_outputs(app, c);
    } catch (const CLI::CallForHelp&) {
        std::cout << app.help();
        outcome.what = parse_outcome::action::exit;
        outcome.exit_code = 0;
    } catch (const CLI::CallForVersion& e) {
        std::cout << e.what() << '\n';
        outcome.what = parse_outcome::action::exit;
        outcome.exit_code = 0;
    } catch (const CLI::ParseError& e) {
        std::cerr << "smrbench: error: " << explain(e, app) << '\n';
        outcome.what = parse_outcome::action::exit;
        outcome.exit_code = 2;
    } catch (const bad_input& e) {
        std::cerr << "smrbench: error: " << e.what() << '\n';
        outcome.what = parse_outcome::action::exit;
        outcome.exit_code = 2;
    }
    return outcome;
}

}  // namespace smrbench
