// smrbench's options, described once: the table that generates the command
// line, the JSON `config` object and (smrbench --list --json) the
// machine-readable description the Python side reads.
//
// Adding an option: add its field to bench_config or one of its parts
// (run_spec.hpp) and one row to the table in option_table.cpp; a reclaimer
// parameter is a member of smr::domain_config, which its row writes into
// bench_config::domain. A number is parsed by CLI11 into its field and
// checked against the row's range; a text option (a name from a fixed set,
// or a form such as --prefill's) is kept as text and parsed by
// parse_command_line, which owns the messages that name the valid values.
#pragma once

#include <CLI/CLI.hpp>
#include <cstddef>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "run_spec.hpp"
#include "smr/reclaim/traits.hpp"

namespace smrbench {

/// What an option configures.
enum class option_target : std::uint8_t {
    benchmark,  ///< the workload, the run, the allocator, the recording
    domain,     ///< a reclaimer parameter, passed on in smr::domain_config
    output,     ///< what smrbench prints; not part of the run (not in the JSON config)
};

/// The commands an option belongs to, as a bit set: the set benchmark's
/// options are its own, a few (the allocator, threads, timing, output) are
/// shared with threadtest, layout and stamp.
enum command_set : std::uint8_t {
    for_set = 1U << static_cast<unsigned>(bench_command::set),
    for_threadtest = 1U << static_cast<unsigned>(bench_command::threadtest),
    for_layout = 1U << static_cast<unsigned>(bench_command::layout),
    for_stamp = 1U << static_cast<unsigned>(bench_command::stamp),
    for_all = for_set | for_threadtest | for_layout | for_stamp,
};

constexpr bool belongs_to(std::uint8_t commands, bench_command command) {
    return (commands & (1U << static_cast<unsigned>(command))) != 0;
}

/// Text options keep their text until parse_command_line reads it (their
/// row gives the JSON value).
struct text_option {
    std::string_view default_text;
    /// The names it accepts, space-separated; empty when not a fixed set.
    std::string_view choices = "";
};

/// The part of bench_config `c` whose members have type Part: the config
/// itself, its workload, recordings or outputs, its domain configuration, or
/// the domain's free policy (const when `c` is).
template <class Part, class Config>
constexpr auto& config_part(Config& c) {
    if constexpr (std::is_same_v<Part, bench_config>) return c;
    if constexpr (std::is_same_v<Part, workload_spec>) return c.workload;
    if constexpr (std::is_same_v<Part, recording_spec>) return c.recording;
    if constexpr (std::is_same_v<Part, output_spec>) return c.output;
    if constexpr (std::is_same_v<Part, smr::domain_config>) return c.domain;
    if constexpr (std::is_same_v<Part, smr::free_policy>) return c.domain.free;
}

/// The member of a bench_config that an option writes, a member of one of
/// its parts (config_part); a reclaimer parameter is one of the domain's.
template <class T>
class config_member {
  public:
    template <class Part>
    constexpr config_member(T Part::*member) : member_(member) {}

    /// Whether it is a reclaimer parameter, passed on in smr::domain_config.
    constexpr bool in_domain() const {
        return std::holds_alternative<T smr::domain_config::*>(member_) ||
               std::holds_alternative<T smr::free_policy::*>(member_);
    }

    T& of(bench_config& c) const { return ref(c); }
    const T& of(const bench_config& c) const { return ref(c); }

  private:
    template <class Config>
    auto& ref(Config& c) const {
        return std::visit(
            [&c]<class Part>(T Part::*member) -> auto& { return config_part<Part>(c).*member; },
            member_);
    }

    std::variant<T bench_config::*, T workload_spec::*, T recording_spec::*, T output_spec::*,
                 T smr::domain_config::*, T smr::free_policy::*>
        member_;
};

/// The member an option writes (std::size_t, which smr::domain_config's
/// sizes use, is std::uint64_t on the LP64 systems smrbench builds on).
using option_field =
    std::variant<config_member<int>, config_member<std::uint32_t>, config_member<std::int64_t>,
                 config_member<std::uint64_t>, config_member<double>, config_member<bool>,
                 config_member<std::string>, text_option>;
static_assert(std::is_same_v<std::size_t, std::uint64_t>);

/// One option. Its CLI flag is "--" + name; its JSON key is name with '_'
/// for '-'.
struct option_spec {
    std::string_view name;
    option_field field;
    std::string_view help;
    option_target target = option_target::benchmark;
    /// Numbers: the accepted range, inclusive (checked when ranged).
    bool ranged = false;
    double minimum = 0;
    double maximum = 0;
    std::string_view unit = "";
    /// Shown without a default in --help (its default depends on others).
    bool derived_default = false;
    /// What --help calls a string option's value (numbers show their range,
    /// text options their choices).
    std::string_view metavar = "NAME";
    /// The value in the JSON config when it is not the field's own (text
    /// options: the parsed name or count; null where it does not apply).
    nlohmann::json (*json)(const bench_config&) = nullptr;
    /// The commands that take it (command_set bits).
    std::uint8_t commands = for_set;
    /// A reclaimer's tuning: whether reclaimer `traits` reads it (null: an
    /// option of every reclaimer). smrbench refuses a tuning given with a
    /// reclaimer that would ignore it, --help and --list name those that read
    /// it, and the JSON config records null in a run of any other.
    bool (*read_by)(const smr::reclaimer_traits&) = nullptr;
    /// A reclaimer's tuning whose default depends on the reclaimer: the
    /// default for each reclaimer that reads it. The field then starts at 0,
    /// "not given", which the option's range excludes; parse_command_line
    /// puts the run's reclaimer's default there, and --help and --list --json
    /// give the default of each reader.
    std::uint64_t (*default_for)(const smr::reclaimer_traits&) = nullptr;
};

/// The reclaimers that read option `spec` (a reclaimer's tuning; empty for
/// an option of every reclaimer), and the same as text: "hp, he".
std::vector<std::string> readers(const option_spec& spec);
std::string readers_of(const option_spec& spec);

/// Every option, in --help order.
std::span<const option_spec> option_table();

/// Gives each reclaimer tuning with a per-reclaimer default that the command
/// line left out (still 0) the default of the resolved pair's reclaimer
/// (config.combo, which must be set).
void apply_reclaimer_defaults(bench_config& config);

/// The text of every text option after parsing, by option name.
using option_texts = std::map<std::string_view, std::string>;

/// Adds every option of `command` to `app`, writing into `config` (numbers,
/// flags, plain strings) and `texts` (text options, preset to their defaults).
void add_table_options(CLI::App& app, bench_config& config, option_texts& texts,
                       bench_command command);

/// The JSON config: every option of config.command not of target output, by
/// JSON key.
nlohmann::json table_config_json(const bench_config& config);

/// What a subcommand's JSON (threadtest, layout, stamp) starts with: the
/// format version, the command, its config and the allocator really in use.
nlohmann::json subcommand_json(const bench_config& config, const allocator_identity& allocator);

/// What a subcommand's JSON (threadtest, stamp) ends with: whether every
/// trial validated, the largest peak RSS, the median trial and every trial.
nlohmann::json subcommand_trials_json(bool validated, std::uint64_t peak_rss_bytes,
                                      int median_trial, nlohmann::json trials);

/// smrbench --list --json's "options": every option's name, flag, JSON key,
/// type (int, float, bool, str), default (null when derived from others),
/// range (null when unchecked), unit, target, help and the commands that take
/// it ("set", "threadtest", "layout").
nlohmann::json options_description();

}  // namespace smrbench
