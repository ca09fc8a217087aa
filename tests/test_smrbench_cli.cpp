// smrbench as a user meets it: every kind of bad input is refused with one
// line on stderr and exit code 2, nothing on stdout; good input gives exactly
// one JSON object with the documented fields.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "smr/core/asymmetric_fence.hpp"
#include "smr/ds/dgt_bst.hpp"
#include "smr/ds/hm_list.hpp"
#include "smr/reclaim/debra.hpp"
#include "smr/reclaim/none.hpp"
#include "smrbench_process.hpp"
#include "stamp_inputs.hpp"

namespace {

using namespace smrbench_test;

const char* const quick = "--threads 2 --key-range 256 --duration 0.05 --quiet";

// ---- bad input --------------------------------------------------------------

class BadInput : public testing::TestWithParam<bad_input_case> {};

TEST_P(BadInput, IsRefusedWithOneLineAndExitCode2) { expect_refused(GetParam()); }

INSTANTIATE_TEST_SUITE_P(
    Cli, BadInput,
    testing::Values(
        bad_input_case{"--ds no_such_ds", "no_such_ds"},
        bad_input_case{"--reclaimer no_such_reclaimer", "no_such_reclaimer"},
        bad_input_case{"--free sometimes", "sometimes"},
        bad_input_case{"--alloc no_such_alloc", "no_such_alloc"},
        bad_input_case{"--pin everywhere", "everywhere"},
        bad_input_case{"--insert 70 --erase 40", "exceed 100"},
        bad_input_case{"--insert 101", "--insert"}, bad_input_case{"--erase -5", "--erase"},
        bad_input_case{"--threads 0", "--threads"}, bad_input_case{"--threads many", "--threads"},
        bad_input_case{"--key-range 0", "--key-range"},
        bad_input_case{"--duration 0", "--duration"}, bad_input_case{"--duration -1", "--duration"},
        bad_input_case{"--trials 0", "--trials"}, bad_input_case{"--free-k 0", "--free-k"},
        bad_input_case{"--prefill lots", "--prefill"},
        bad_input_case{"--key-range 100 --prefill 101", "--prefill"},
        bad_input_case{"--no-such-option", "no-such-option"},
        bad_input_case{"stray_positional", "stray_positional"},
        bad_input_case{"--timeline /no/such/dir/run.timeline", "/no/such/dir"},
        bad_input_case{"--garbage-series /no/such/dir/g.csv", "/no/such/dir"},
        // Taken by NBR, SIGINT or SIGTERM could not stop the run.
        bad_input_case{"--reclaimer nbr --signal 2", "could no longer be interrupted"},
        bad_input_case{"--reclaimer nbrplus --signal 15", "could no longer be interrupted"},
        bad_input_case{"--reclaimer nbr --signal 11", "reports a fault"},
        bad_input_case{"--reclaimer nbr --signal 9", "cannot be caught"},
        bad_input_case{"--reclaimer hp_pop --pop-signal 3",
                       "--pop-signal: signal 3 stops the process"},
        // A reclaimer's tuning given with a reclaimer that would ignore it.
        bad_input_case{"--reclaimer ebr --check-every 5",
                       "--check-every is read only by debra, and --reclaimer ebr would ignore "
                       "it: leave it out"},
        bad_input_case{"--reclaimer debra --bag-size 64",
                       "--bag-size is read only by rcu, qsbr_ibr, hp, hp_pop, hp_pp, he, he_pop, "
                       "epoch_pop, ibr, wfe, hyaline, crystalline_l, crystalline, "
                       "nbr, "
                       "nbrplus"},
        bad_input_case{"--reclaimer debra --quiescent-every 100",
                       "--quiescent-every is read only by qsbr, qsbr_ibr, urcu_qsbr"},
        bad_input_case{
            "--ds hm_list --reclaimer hp --epoch-freq 50",
            "--epoch-freq is read only by rcu, qsbr_ibr, he, he_pop, epoch_pop, ibr, wfe"},
        bad_input_case{"--reclaimer token_naive --token-check-every 5",
                       "--token-check-every is read only by token_periodic"},
        bad_input_case{"--ds hm_list --reclaimer hp --min-epoch-us 100",
                       "--min-epoch-us is read only by ebr, nebr, debra, qsbr"},
        bad_input_case{"--reclaimer nbr --nbr-low-watermark 4",
                       "--nbr-low-watermark is read only by hp_pop, epoch_pop, nbrplus"},
        bad_input_case{"--reclaimer nbr --pop-signal 12",
                       "--pop-signal is read only by hp_pop, he_pop, epoch_pop"},
        bad_input_case{"--reclaimer qsbr --signal 12", "--signal is read only by nbr, nbrplus"},
        bad_input_case{"--reclaimer debra --fence symmetric", "--fence is read only by hp"},
        bad_input_case{"--ds hm_list --reclaimer hp --fence sometimes", "sometimes"},
        // rcu's threads only read a global clock: no thread begins an epoch.
        bad_input_case{"--reclaimer rcu --garbage-series /tmp/smrbench-never.garbage",
                       "--garbage-series is read only by ebr, nebr, debra, qsbr, token_naive, "
                       "token_passfirst, token_periodic"},
        bad_input_case{"--ds lazylist --restart-from-head", "--restart-from-head"},
        bad_input_case{"--ds harris_list --restart-from-head", "--restart-from-head"},
        bad_input_case{"--ds ms_queue --restart-from-head", "--restart-from-head"},
        bad_input_case{"--ds ms_queue --insert 40 --erase 40", "contains"},
        bad_input_case{"--ds ms_queue --insert 0 --erase 0", "contains"},
        bad_input_case{"--ds hash_set --buckets 0", "--buckets"},
        bad_input_case{"--ds hash_set --buckets -3", "--buckets"},
        bad_input_case{"--ds lazylist --buckets 8", "--buckets"},
        bad_input_case{"--ds ms_queue --buckets 8", "--buckets"},
        bad_input_case{"--ds lazylist --ort-shift 4", "--ort-shift"},
        bad_input_case{"--ds hash_set --ort-bits 10", "--ort-bits"},
        bad_input_case{"--ds stm_list --ort-shift 13", "--ort-shift"},
        bad_input_case{"--ds stm_list --ort-bits 0", "--ort-bits"},
        bad_input_case{"--ds stm_list --reclaimer hp", "hazard pointers or eras"},
        bad_input_case{"--ds stm_list --reclaimer hp --allow-unsafe", "cannot run with"},
        bad_input_case{"--ds stm_list --reclaimer nbr", "siglongjmp"},
        bad_input_case{"--ds stm_list --pool-nodes 1000", "--pool-nodes"},
        bad_input_case{"--ds stm_list --count-remote-frees", "--count-remote-frees"},
        bad_input_case{"--ds stm_hash_set --pool-nodes 1000", "--pool-nodes"},
        bad_input_case{"--ds stm_hash_set --buckets 0", "--buckets"},
        bad_input_case{"--ds stm_hash_set --reclaimer wfe", "hazard pointers or eras"},
        bad_input_case{"--ds stm_rbtree --reclaimer lfrc", "untyped"},
        bad_input_case{"--alternate --insert 40 --erase 20", "--alternate"},
        bad_input_case{"--ds ms_queue --alternate", "--alternate"},
        bad_input_case{"--markdown", "--markdown"},
        bad_input_case{"--on-empty spin", "--pool-nodes"},
        bad_input_case{"--pool-nodes 100 --on-empty sometimes", "sometimes"},
        bad_input_case{"--pool-nodes -1", "--pool-nodes"},
        bad_input_case{"--pool-nodes lots", "--pool-nodes"},
        bad_input_case{"--reclaimer nbrplus --bag-size 4 --nbr-low-watermark 4",
                       "--nbr-low-watermark 4 must be below the high watermark 4"},
        bad_input_case{"--reclaimer hp_pop --nbr-low-watermark 9 --nbr-high-watermark 8",
                       "--nbr-low-watermark 9 must be below the high watermark 8"},
        bad_input_case{"--reclaimer nbrplus --nbr-low-watermark 9 --nbr-high-watermark 8",
                       "--nbr-low-watermark 9 must be below the high watermark 8"},
        // One option of a pair would silently lose to the other.
        bad_input_case{"--ops 100 --duration 1", "give one of them"},
        bad_input_case{"threadtest --ops 100 --duration 1", "give one of them"},
        bad_input_case{"--free-k 4", "--free is batch"},
        bad_input_case{"--free batch --free-catchup-div 8", "--free-catchup-div"},
        bad_input_case{"--timeline ''", "--timeline: an empty path"},
        bad_input_case{"--garbage-series ''", "--garbage-series: an empty path"},
        // A value past the C type quotes the option's own range, not the type's.
        bad_input_case{"--threads 99999999999", "[1, 4096]"},
        bad_input_case{"--free-k 99999999999", "[1, 1048576]"},
        // CLI11's own refusals, in smrbench's words.
        bad_input_case{"--threads", "--threads: expected a value in 1..4096"},
        bad_input_case{"--threads 1 --threads 2", "--threads is given 2 times: give it once"},
        bad_input_case{"--block-size 64", "--block-size is an option of threadtest and layout"},
        bad_input_case{"--app vacation-low", "--app is an option of stamp"},
        bad_input_case{"stamp --app vacation-medium", "vacation-medium"},
        bad_input_case{"stamp --key-range 10", "--key-range"},
        bad_input_case{"--threads 2 stamp", "before 'stamp'"},
        bad_input_case{"--ds", "--ds: expected a value (a name)"}),
    bad_input_name);

// ---- good input -------------------------------------------------------------

// Only nbrplus reads the low watermark: Hart's HPBR setting (--bag-size 1,
// R = 2H + 100) must not be refused for a watermark hp never uses, nor nbr's
// bag of 1 for a low watermark it has not.
TEST(Cli, WatermarksAreCheckedOnlyForNbrplus) {
    for (const char* tuned : {"hp --hp-scan-offset 100", "nbr"}) {
        const run_result r = smrbench(std::string("--ds hm_list --reclaimer ") + tuned +
                                      " --bag-size 1 --key-range 16 --ops 1000 --threads 1 "
                                      "--quiet");
        EXPECT_EQ(r.exit_code, 0) << tuned << ": " << r.err;
    }
}

// The JSON config holds a tuning's value where the run's reclaimer reads it,
// and null where it would not (given or not: a default is not a setting).
TEST(Cli, TheConfigRecordsOnlyTheTuningsTheReclaimerReads) {
    const std::string base = "--ds hm_list --key-range 16 --ops 100 --threads 1 --quiet --json ";
    const run_result debra = smrbench(base + "--reclaimer debra --check-every 7");
    const run_result hp = smrbench(base + "--reclaimer hp --bag-size 9");
    ASSERT_EQ(debra.exit_code, 0) << debra.err;
    ASSERT_EQ(hp.exit_code, 0) << hp.err;
    const auto d = nlohmann::json::parse(debra.out)["config"];
    const auto h = nlohmann::json::parse(hp.out)["config"];
    EXPECT_EQ(d["check_every"], 7);
    EXPECT_TRUE(d["bag_size"].is_null());
    EXPECT_TRUE(d["epoch_freq"].is_null());
    EXPECT_EQ(h["bag_size"], 9);
    EXPECT_EQ(h["hp_scan_factor"], 2);
    EXPECT_TRUE(h["check_every"].is_null());
    EXPECT_TRUE(h["epoch_freq"].is_null());
}

// --min-epoch-us: the epoch advances at most once per minimum over the whole
// trial (prefill included), so limbo bags grow; without it, thousands of
// times as often.
TEST(Cli, MinEpochSpacesTheEpochsAdvances) {
    const std::string base =
        "--ds dgt_bst --reclaimer debra --threads 2 --key-range 20000 --ops 40000 --quiet --json";
    const run_result spaced = smrbench(base + " --min-epoch-us 20000");
    ASSERT_EQ(spaced.exit_code, 0) << spaced.err;
    const auto run = nlohmann::json::parse(spaced.out);
    EXPECT_EQ(run["config"]["min_epoch_us"], 20000);
    EXPECT_TRUE(run["validated"].get<bool>());
    const auto& trial = run["trials"][0];
    const double seconds =
        trial["prefill_seconds"].get<double>() + trial["measured_seconds"].get<double>();
    const auto epochs = run["reclaimer"]["epochs"].get<std::uint64_t>();
    // The trial's span is a little longer than prefill + measured time: one
    // advance of slack.
    EXPECT_LE(static_cast<double>(epochs), seconds / 0.020 + 2) << seconds << " s";
    const run_result eager = smrbench(base);
    ASSERT_EQ(eager.exit_code, 0) << eager.err;
    EXPECT_TRUE(nlohmann::json::parse(eager.out)["config"]["min_epoch_us"] == 0);
}

// --bag-size's default is the run's reclaimer's (2K for the reservation and
// neutralization schemes, the papers' 32K for the epoch schemes), recorded in
// the JSON config as the value that ran; --help and --list --json give every
// reader's default.
TEST(Cli, TheBagSizeDefaultsToTheReclaimers) {
    const std::string base = "--ds hm_list --key-range 16 --ops 100 --threads 1 --quiet --json ";
    const auto bag_of = [&](const std::string& args) {
        const run_result r = smrbench(base + args);
        EXPECT_EQ(r.exit_code, 0) << args << ": " << r.err;
        return r.exit_code == 0 ? nlohmann::json::parse(r.out)["config"]["bag_size"]
                                : nlohmann::json();
    };
    EXPECT_EQ(bag_of("--reclaimer nbr"), 2048);
    EXPECT_EQ(bag_of("--reclaimer nbrplus"), 2048);
    EXPECT_EQ(bag_of("--reclaimer hp"), 2048);
    EXPECT_EQ(bag_of("--reclaimer wfe"), 2048);
    EXPECT_EQ(bag_of("--reclaimer rcu"), 32768);
    EXPECT_EQ(bag_of("--reclaimer hp --bag-size 32768"), 32768);
    EXPECT_EQ(bag_of("--reclaimer nbr --bag-size 32768"), 32768);
    EXPECT_TRUE(bag_of("--reclaimer debra").is_null());

    const auto list = nlohmann::json::parse(smrbench("--list --json").out);
    const auto row = std::ranges::find(list["options"], nlohmann::json("bag_size"),
                                       [](const nlohmann::json& o) { return o["key"]; });
    ASSERT_NE(row, list["options"].end());
    EXPECT_TRUE((*row)["default"].is_null());
    const auto& defaults = (*row)["default_by_reclaimer"];
    EXPECT_EQ(defaults["nbr"], 2048);
    EXPECT_EQ(defaults["hp"], 2048);
    EXPECT_EQ(defaults["qsbr_ibr"], 32768);
    EXPECT_FALSE(defaults.contains("debra"));
    EXPECT_EQ(defaults.size(), (*row)["reclaimers"].size());
    const std::string help = smrbench("--help").out;
    EXPECT_NE(help.find("(default 2048; 32768 for rcu, qsbr_ibr)"), std::string::npos);
    // A default that depends on others is not shown as its placeholder 0.
    EXPECT_EQ(help.find("--bag-size 1..4294967296="), std::string::npos) << help;
    EXPECT_EQ(help.find("--buckets 1..1099511627776="), std::string::npos) << help;
    expect_refused({"--reclaimer nbr --bag-size 0", "--bag-size"});
}

// hp fences asymmetrically unless asked not to: a compiler barrier per
// protect and one membarrier call per scan, or Michael's full fence per
// protect and no membarrier. The reclaimer object says which ran.
// --count-remote-frees: how many freed nodes another worker allocated, for
// every family's path to the free (a bag, a scan, lfrc's last release on its
// pool); null when not asked for.
TEST(Cli, RemoteFreesAreCountedWhenAsked) {
    for (const std::string reclaimer : {"debra", "hp --bag-size 64", "lfrc"}) {
        const run_result counted =
            smrbench("--ds hm_list --reclaimer " + reclaimer +
                     " --key-range 128 --ops 5000 --threads 4 --count-remote-frees --quiet --json");
        ASSERT_EQ(counted.exit_code, 0) << reclaimer << ": " << counted.err;
        const auto run = nlohmann::json::parse(counted.out);
        EXPECT_TRUE(run["validated"].get<bool>()) << reclaimer;
        EXPECT_EQ(run["config"]["count_remote_frees"], true) << reclaimer;
        const auto& r = run["reclaimer"];
        const auto freed = r["freed"].get<std::uint64_t>();
        const auto remote = r["remote_frees"].get<std::uint64_t>();
        // Four workers insert and erase 128 keys: most erased nodes are
        // another worker's, and never more than were freed.
        EXPECT_GT(remote, 0u) << reclaimer;
        EXPECT_LE(remote, freed) << reclaimer;
        EXPECT_DOUBLE_EQ(r["remote_frees_pct"].get<double>(),
                         100.0 * static_cast<double>(remote) / static_cast<double>(freed))
            << reclaimer;
    }
    const run_result plain = smrbench("--ds hm_list --key-range 128 --ops 2000 --quiet --json");
    ASSERT_EQ(plain.exit_code, 0) << plain.err;
    const auto run = nlohmann::json::parse(plain.out);
    EXPECT_TRUE(run["reclaimer"]["remote_frees"].is_null());
    EXPECT_TRUE(run["reclaimer"]["remote_frees_pct"].is_null());
}

TEST(Cli, HazardPointersFenceAsymmetricallyUnlessAskedNotTo) {
    if (!smr::core::asymmetric_fence_available()) GTEST_SKIP() << "no membarrier here";
    const std::string base =
        "--ds hm_list --reclaimer hp --key-range 64 --ops 20000 --threads 2 --bag-size 64 "
        "--quiet --json";
    const run_result asymmetric = smrbench(base);
    const run_result symmetric = smrbench(base + " --fence symmetric");
    const run_result debra = smrbench("--ds hm_list --key-range 64 --ops 100 --quiet --json");
    ASSERT_EQ(asymmetric.exit_code, 0) << asymmetric.err;
    ASSERT_EQ(symmetric.exit_code, 0) << symmetric.err;
    ASSERT_EQ(debra.exit_code, 0) << debra.err;
    const auto a = nlohmann::json::parse(asymmetric.out);
    const auto s = nlohmann::json::parse(symmetric.out);
    EXPECT_EQ(a["config"]["fence"], "asymmetric");
    EXPECT_EQ(a["reclaimer"]["fence"], "asymmetric");
    EXPECT_FALSE(a["reclaimer"].contains("fence_note"));
    // One per scan: each thread scans once per 64 retires at most.
    const auto heavy = a["reclaimer"]["heavy_barriers"].get<std::uint64_t>();
    EXPECT_GT(heavy, 0u);
    EXPECT_LE(heavy, a["reclaimer"]["retired"].get<std::uint64_t>() / 64 + 2);
    EXPECT_EQ(s["config"]["fence"], "symmetric");
    EXPECT_EQ(s["reclaimer"]["fence"], "symmetric");
    EXPECT_EQ(s["reclaimer"]["heavy_barriers"], 0);
    const auto d = nlohmann::json::parse(debra.out);
    EXPECT_TRUE(d["config"]["fence"].is_null());
    EXPECT_TRUE(d["reclaimer"]["fence"].is_null());
}

// A Publish-on-Ping run reports its ping rounds (each signals at least one
// thread) and how long they took; a scheme that does not ping reports none.
TEST(Cli, PublishOnPingReportsItsRoundsAndTheirLatency) {
    const run_result pop = smrbench(
        "--ds hm_list --reclaimer hp_pop --key-range 64 --ops 20000 --threads 4 --bag-size 64 "
        "--quiet --json");
    const run_result ebr = smrbench(
        "--ds hm_list --reclaimer ebr --key-range 64 --ops 2000 "
        "--threads 2 --quiet --json");
    ASSERT_EQ(pop.exit_code, 0) << pop.err;
    ASSERT_EQ(ebr.exit_code, 0) << ebr.err;
    const auto p = nlohmann::json::parse(pop.out)["reclaimer"];
    const auto rounds = p["publish_rounds"].get<std::uint64_t>();
    EXPECT_GT(rounds, 0u);
    EXPECT_LE(rounds, p["signals"].get<std::uint64_t>());
    const auto& latency = p["publish_latency_ns"];
    EXPECT_GT(latency["p50"].get<std::uint64_t>(), 0u);
    EXPECT_LE(latency["p50"].get<std::uint64_t>(), latency["p99"].get<std::uint64_t>());
    EXPECT_LE(latency["p99"].get<std::uint64_t>(), latency["max"].get<std::uint64_t>());
    EXPECT_GT(p["publish_seconds"].get<double>(), 0);
    const auto e = nlohmann::json::parse(ebr.out)["reclaimer"];
    EXPECT_EQ(e["publish_rounds"], 0);
    EXPECT_EQ(e["publish_latency_ns"]["max"], 0);

    const run_result text = smrbench(
        "--ds hm_list --reclaimer hp_pop --key-range 64 --ops 20000 --threads 4 --bag-size 64");
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("ping rounds: "), std::string::npos) << text.out;
}

// Where membarrier fails (a kernel without it), a run that did not ask for a
// mode falls back to symmetric fences and says so; one that asked for
// asymmetric ones is refused before it starts.
TEST(Cli, WithoutMembarrierFencesFallBackOrAreRefused) {
    const std::string hp =
        "--ds hm_list --reclaimer hp --key-range 64 --ops 20000 --threads 2 --bag-size 64 "
        "--quiet --json";
    const run_result fallback = run_binary(WITHOUT_MEMBARRIER_PATH, SMRBENCH_PATH " " + hp);
    ASSERT_EQ(fallback.exit_code, 0) << fallback.err;
    const auto run = nlohmann::json::parse(fallback.out);
    EXPECT_EQ(run["config"]["fence"], "asymmetric");
    EXPECT_EQ(run["reclaimer"]["fence"], "symmetric");
    EXPECT_NE(run["reclaimer"]["fence_note"].get<std::string>().find("membarrier"),
              std::string::npos);
    EXPECT_EQ(run["reclaimer"]["heavy_barriers"], 0);
    EXPECT_TRUE(run["validated"].get<bool>());

    const run_result refused =
        run_binary(WITHOUT_MEMBARRIER_PATH, SMRBENCH_PATH " " + hp + " --fence asymmetric");
    EXPECT_EQ(refused.exit_code, 2);
    EXPECT_EQ(count_lines(refused.err), 1) << refused.err;
    EXPECT_NE(refused.err.find("--fence asymmetric: this process cannot use membarrier"),
              std::string::npos)
        << refused.err;
    EXPECT_TRUE(refused.out.empty()) << refused.out;
}

TEST(Cli, HelpExitsZero) {
    const run_result r = smrbench("--help");
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_NE(r.out.find("--reclaimer"), std::string::npos);
}

// --help gives each number's range and each name's choices as its type, not
// CLI11's tags (INT:DECIMAL:RANGE).
TEST(Cli, HelpShowsRangesNotTypeTags) {
    for (const char* command : {"--help", "threadtest --help", "layout --help", "stamp --help"}) {
        const run_result r = smrbench(command);
        EXPECT_EQ(r.exit_code, 0) << command;
        for (const char* tag : {"DECIMAL", "RANGE", " INT", " UINT", " FLOAT", " TEXT"}) {
            EXPECT_EQ(r.out.find(tag), std::string::npos) << command << " shows " << tag;
        }
    }
    const std::string help = smrbench("--help").out;
    EXPECT_NE(help.find("--threads 1..4096"), std::string::npos) << help;
    EXPECT_NE(help.find("--free batch|amortized"), std::string::npos) << help;
    EXPECT_NE(help.find("--timeline FILE"), std::string::npos) << help;
}

// The pairs refused above run when they agree.
TEST(Cli, AmortizedTuningRunsWithAmortizedFreeing) {
    const run_result r = smrbench(
        "--ds lazylist --reclaimer debra --free amortized --free-k 4 --free-catchup-div 8 "
        "--key-range 64 --ops 1000 --threads 1 --quiet");
    EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(Cli, ListNamesEveryReclaimerAndCombination) {
    const run_result r = smrbench("--list --json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto list = nlohmann::json::parse(r.out);
    std::vector<std::string> names;
    for (const auto& rec : list["reclaimers"]) names.push_back(rec["name"]);
    for (const char* expected : {"none", "ebr", "nebr", "debra", "qsbr", "rcu", "token_naive",
                                 "token_passfirst", "token_periodic"}) {
        EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected;
    }
    EXPECT_EQ(list["combinations"].size(), list["data_structures"].size() * names.size());
    for (const auto& combo : list["combinations"]) {
        // "valid" (what smrbench runs without --allow-unsafe) is "safe".
        EXPECT_EQ(combo["valid"], combo["safe"]) << combo;
        EXPECT_FALSE(combo["reason"].get<std::string>().empty()) << combo;
        EXPECT_EQ(combo["restart_from_head_option"].get<bool>(),
                  combo["ds"] == "hm_list" || combo["ds"] == "hash_set");
    }
    const run_result text = smrbench("--list");
    EXPECT_EQ(text.exit_code, 0);
    EXPECT_NE(text.out.find("valid combinations"), std::string::npos);
    EXPECT_NE(text.out.find("compatibility (ds x reclaimer"), std::string::npos);
    EXPECT_NE(text.out.find("hm_list"), std::string::npos);
}

// node_bytes is the library's own sizeof, header included, and depends on the
// reclaimer: he adds a birth era to the header every scheme has.
TEST(Cli, ListGivesEachCombinationsNodeBytes) {
    const auto list = nlohmann::json::parse(smrbench("--list --json").out);
    std::size_t dgt_debra = 0, hm_none = 0, hm_he = 0;
    for (const auto& combo : list["combinations"]) {
        const auto bytes = combo["node_bytes"].get<std::size_t>();
        EXPECT_GT(bytes, 0U) << combo;
        if (combo["ds"] == "dgt_bst" && combo["reclaimer"] == "debra") dgt_debra = bytes;
        if (combo["ds"] == "hm_list" && combo["reclaimer"] == "none") hm_none = bytes;
        if (combo["ds"] == "hm_list" && combo["reclaimer"] == "he") hm_he = bytes;
    }
    EXPECT_EQ(dgt_debra, smr::ds::dgt_bst<smr::debra_domain>::node_size);
    EXPECT_EQ(hm_none, smr::ds::hm_list<smr::leak_domain>::node_size);
    EXPECT_GT(hm_he, hm_none);
}

// ---- unsafe combinations and --allow-unsafe -----------------------------------

TEST(Cli, UnsafeCombinationIsRefusedUnlessAllowed) {
    const auto list = nlohmann::json::parse(smrbench("--list --json").out);
    const nlohmann::json* unsafe = nullptr;
    for (const auto& combo : list["combinations"]) {
        if (!combo["safe"].get<bool>()) {
            unsafe = &combo;
            break;
        }
    }
    if (unsafe == nullptr) GTEST_SKIP() << "every compiled combination is safe";
    const std::string ds = (*unsafe)["ds"], reclaimer = (*unsafe)["reclaimer"];
    const std::string pair = " --ds " + ds + " --reclaimer " + reclaimer;

    const run_result refused = smrbench(std::string(quick) + " --json" + pair);
    EXPECT_EQ(refused.exit_code, 2);
    EXPECT_EQ(refused.err, "smrbench: error: " + reclaimer + " is unsafe with " + ds + ": " +
                               (*unsafe)["reason"].get<std::string>() +
                               " (--allow-unsafe runs it anyway)\n");
    EXPECT_TRUE(refused.out.empty());

    // One thread: nothing is freed under a concurrent reader, so the unsafe
    // pair cannot actually fail here; the point is that it runs.
    const run_result allowed = smrbench(
        "--threads 1 --key-range 256 --duration 0.05 --quiet --json --allow-unsafe" + pair);
    ASSERT_EQ(allowed.exit_code, 0) << allowed.err;
    const auto run = nlohmann::json::parse(allowed.out);
    EXPECT_TRUE(run["config"]["allow_unsafe"].get<bool>());
    EXPECT_FALSE(run["reclaimer"]["safe_with_ds"].get<bool>());
    EXPECT_TRUE(run["validated"].get<bool>());
}

TEST(Cli, HmListRestartsFromHeadOnRequest) {
    for (const char* flag : {"", " --restart-from-head"}) {
        const std::string args =
            std::string(
                "--threads 2 --key-range 64 --duration 0.05 --quiet --json --ds hm_list "
                "--reclaimer debra") +
            flag;
        const run_result r = smrbench(args);
        ASSERT_EQ(r.exit_code, 0) << args << "\n" << r.err;
        const auto run = nlohmann::json::parse(r.out);
        EXPECT_EQ(run["config"]["restart_from_head"].get<bool>(), *flag != '\0') << args;
        EXPECT_TRUE(run["validated"].get<bool>()) << args;
        EXPECT_TRUE(run["reclaimer"]["safe_with_ds"].get<bool>()) << args;
    }
}

TEST(Cli, MsQueueRunsAndValidates) {
    // 50/50 (the queue hovers around its prefill), growing, and shrinking
    // (many dequeues find it empty), under an epoch and a reservation scheme.
    for (const char* mix :
         {"--insert 50 --erase 50", "--insert 70 --erase 30", "--insert 20 --erase 80"}) {
        for (const char* reclaimer : {"debra", "hp"}) {
            const std::string args =
                std::string(quick) + " --json --ds ms_queue --reclaimer " + reclaimer + " " + mix;
            const run_result r = smrbench(args);
            ASSERT_EQ(r.exit_code, 0) << args << "\n" << r.err;
            EXPECT_EQ(count_lines(r.out), 1) << args;
            const auto run = nlohmann::json::parse(r.out);
            EXPECT_TRUE(run["validated"].get<bool>()) << args << "\n" << run["trials"];
            EXPECT_EQ(run["config"]["ds"], "ms_queue");
            EXPECT_EQ(run["config"]["contains"], 0);
            EXPECT_TRUE(run["config"]["buckets"].is_null());
            const auto& trial = run["trials"][0];
            // Every enqueue succeeds, so the prefill reaches its target; each
            // of the 2 workers may add one past it (they check, then insert).
            const auto target = run["config"]["prefill_target"].get<std::int64_t>();
            EXPECT_GE(trial["prefill_size"].get<std::int64_t>(), target) << args;
            EXPECT_LE(trial["prefill_size"].get<std::int64_t>(), target + 1) << args;
            EXPECT_EQ(trial["validation"]["size"], trial["validation"]["expected_size"]);
            EXPECT_EQ(trial["validation"]["key_sum"], trial["validation"]["expected_key_sum"]);
            EXPECT_GT(run["reclaimer"]["retired"].get<std::uint64_t>(), 0u) << args;
        }
    }
}

TEST(Cli, HashSetRunsAndReportsItsBuckets) {
    for (const char* buckets : {"", " --buckets 16", " --buckets 1"}) {
        const std::string args =
            std::string(quick) + " --json --ds hash_set --reclaimer debra" + buckets;
        const run_result r = smrbench(args);
        ASSERT_EQ(r.exit_code, 0) << args << "\n" << r.err;
        const auto run = nlohmann::json::parse(r.out);
        EXPECT_TRUE(run["validated"].get<bool>()) << args;
        // Default: key range / 2 (quick's key range is 256).
        const std::uint64_t expected = *buckets == '\0' ? 128 : std::stoull(buckets + 10);
        EXPECT_EQ(run["config"]["buckets"].get<std::uint64_t>(), expected) << args;
    }
    const run_result restarting =
        smrbench(std::string(quick) + " --json --ds hash_set --reclaimer hp --restart-from-head");
    ASSERT_EQ(restarting.exit_code, 0) << restarting.err;
    EXPECT_TRUE(nlohmann::json::parse(restarting.out)["validated"].get<bool>());
}

// The transactional structures: their STM's counts cover the measured interval (one
// commit per operation), its options reach the STM, and every other
// structure reports neither.
TEST(Cli, TransactionalStructuresReportTheirTransactions) {
    for (const std::string ds : {"stm_list", "stm_hash_set", "stm_rbtree"}) {
        for (const char* shift : {"", " --ort-shift 4"}) {
            const std::string args =
                "--threads 3 --key-range 64 --ops 3000 --quiet --json --reclaimer debra --ds " +
                ds + shift;
            const run_result r = smrbench(args);
            ASSERT_EQ(r.exit_code, 0) << args << "\n" << r.err << r.out;
            const auto run = nlohmann::json::parse(r.out);
            EXPECT_TRUE(run["validated"].get<bool>()) << args;
            EXPECT_EQ(run["config"]["ort_shift"].get<int>(), *shift == '\0' ? 5 : 4) << args;
            EXPECT_EQ(run["config"]["ort_bits"].get<int>(), 20) << args;
            const auto& stm = run["trials"][0]["stm"];
            EXPECT_EQ(stm["commits"].get<std::uint64_t>(), 9000u) << args;
            EXPECT_EQ(stm["commits"], run["trials"][0]["operations"]) << args;
            const auto aborts = stm["aborts"].get<std::uint64_t>();
            EXPECT_EQ(aborts, stm["aborts_validation"].get<std::uint64_t>() +
                                  stm["aborts_write_locked"].get<std::uint64_t>() +
                                  stm["aborts_read_locked"].get<std::uint64_t>() +
                                  stm["aborts_explicit"].get<std::uint64_t>());
            EXPECT_LE(stm["false_aborts"].get<std::uint64_t>(), aborts);
            EXPECT_NEAR(stm["aborted_pct"].get<double>(), 100.0 * aborts / (aborts + 9000.0), 1e-9);
            EXPECT_EQ(run["stm"], stm) << "the median trial's";
        }
    }
    const auto other =
        nlohmann::json::parse(smrbench(std::string(quick) + " --json --ds lazylist").out);
    EXPECT_TRUE(other["stm"].is_null());
    EXPECT_TRUE(other["trials"][0]["stm"].is_null());
    EXPECT_TRUE(other["config"]["ort_shift"].is_null());
}

// smrbench stamp: Vacation at STAMP's simulator size, verified; the JSON as
// docs/smrbench.md ("stamp") describes it.
TEST(Cli, StampRunsVacationAndVerifiesIt) {
    const std::string args =
        "stamp --app vacation-high --threads 3 --trials 2 --ort-shift 4 "
        "--quiet --json";
    const run_result r = smrbench(args);
    ASSERT_EQ(r.exit_code, 0) << args << "\n" << r.err << r.out;
    const auto run = nlohmann::json::parse(r.out);
    EXPECT_EQ(run["benchmark"], "stamp");
    EXPECT_EQ(run["app"], "vacation-high");
    EXPECT_EQ(run["config"]["app"], "vacation-high");
    EXPECT_EQ(run["config"]["threads"], 3);
    EXPECT_EQ(run["config"]["ort_shift"], 4);
    EXPECT_EQ(run["config"]["ort_bits"], 20);
    const auto& input = run["input"];
    EXPECT_EQ(input["clients"], 3);
    EXPECT_EQ(input["queries"], 4);
    EXPECT_EQ(input["percent_queried"], 60);
    EXPECT_EQ(input["relations"], 16384);
    EXPECT_EQ(input["tasks"], 4096);
    EXPECT_EQ(input["percent_user"], 90);
    EXPECT_EQ(input["query_range"], 9830);
    EXPECT_TRUE(run["validated"].get<bool>());
    ASSERT_EQ(run["trials"].size(), 2U);
    for (const auto& t : run["trials"]) {
        EXPECT_TRUE(t["validated"].get<bool>()) << t["validation"]["error"];
        EXPECT_EQ(t["tasks"], 3 * 1365) << "STAMP rounds each client's share: 4096 / 3";
        EXPECT_EQ(t["stm"]["commits"], t["tasks"]) << "a task is one transaction";
        EXPECT_GT(t["seconds"].get<double>(), 0.0);
    }
    EXPECT_LE(run["seconds_min"].get<double>(), run["seconds"].get<double>());
    EXPECT_GE(run["seconds_max"].get<double>(), run["seconds"].get<double>());
    EXPECT_EQ(run["stm"], run["trials"][run["median_trial"].get<int>()]["stm"]);
    EXPECT_NEAR(run["throughput_ops_per_s"].get<double>(), 3 * 1365 / run["seconds"].get<double>(),
                1e-6 * run["throughput_ops_per_s"].get<double>());
    EXPECT_FALSE(run["machine"].is_null());
    EXPECT_FALSE(run["build"].is_null());
}

// --app's choices (the option table's text) are the application's inputs.
// option_table.cpp's constant list of --app's choices is every application's
// inputs, in order.
TEST(Cli, StampOffersEveryApplicationsInput) {
    const auto list = nlohmann::json::parse(smrbench("--list --json").out);
    std::vector<std::string> choices;
    for (const auto& option : list["options"]) {
        if (option["flag"] == "--app") choices = option["choices"].get<std::vector<std::string>>();
    }
    EXPECT_EQ(choices, stamp_inputs());
}

// --alternate: each thread erases the key it inserted last, so the set ends
// at its prefill size plus at most one key per thread (without it, the
// 36000 random updates leave the size in that window about 5% of the time).
TEST(Cli, AlternatingUpdatesKeepThePrefillSize) {
    const std::string workload =
        "--threads 3 --key-range 8192 --insert 30 --erase 30 --ops 20000 --quiet --json "
        "--ds stm_list --reclaimer debra";
    const run_result r = smrbench(workload + " --alternate");
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    const auto run = nlohmann::json::parse(r.out);
    EXPECT_TRUE(run["validated"].get<bool>());
    EXPECT_TRUE(run["config"]["alternate"].get<bool>());
    const auto& trial = run["trials"][0];
    const auto prefill = trial["prefill_size"].get<std::int64_t>();
    // The paper's 4096 elements over [0, 8192); threads that passed the
    // prefill's check together may each add one more.
    EXPECT_GE(prefill, 4096);
    EXPECT_LE(prefill, 4096 + 2);
    const auto size = trial["validation"]["size"].get<std::int64_t>();
    EXPECT_GE(size, prefill);
    EXPECT_LE(size, prefill + 3);
}

// --prefill-by main (auto for the stm_* structures): the main thread inserts every key of the
// prefill, so the nodes come from its heap, as in the allocator/STM paper; with the workers'
// prefill it inserts none.
TEST(Cli, ThePrefillIsTheMainThreadsOrTheWorkers) {
    const std::string base =
        "--threads 2 --key-range 2048 --ops 500 --quiet --json "
        "--reclaimer debra --ds ";
    for (const auto& [ds, by, main_fills] :
         {std::tuple{"stm_list", "auto", true}, std::tuple{"dgt_bst", "main", true},
          std::tuple{"dgt_bst", "auto", false}, std::tuple{"stm_list", "workers", false}}) {
        const std::string args = base + ds + " --prefill-by " + by;
        const run_result r = smrbench(args);
        ASSERT_EQ(r.exit_code, 0) << args << "\n" << r.err;
        const auto run = nlohmann::json::parse(r.out);
        const auto& trial = run["trials"][0];
        const auto size = trial["prefill_size"].get<std::int64_t>();
        ASSERT_GE(size, 1024) << args;
        EXPECT_EQ(trial["prefill_main_keys"].get<std::int64_t>(), main_fills ? size : 0) << args;
    }
}

TEST(Cli, JsonIsExactlyOneObjectWithTheDocumentedFields) {
    const run_result r =
        smrbench(std::string(quick) + " --json --trials 3 --reclaimer debra --free amortized");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(count_lines(r.out), 1) << "stdout must hold one JSON line";
    const auto run = nlohmann::json::parse(r.out);
    for (const char* key : {"config", "allocator", "throughput_ops_per_s", "validated",
                            "peak_rss_bytes", "reclaimer", "trials"}) {
        EXPECT_TRUE(run.contains(key)) << key;
    }
    for (const char* key :
         {"ds", "reclaimer", "free", "free_k", "alloc", "threads", "key_range", "insert", "erase",
          "duration", "trials", "prefill", "seed", "pin", "stall", "stall_hold"}) {
        EXPECT_TRUE(run["config"].contains(key)) << "config." << key;
    }
    for (const char* key :
         {"retired", "freed", "garbage_peak", "epochs", "free_seconds", "free_latency_ns"}) {
        EXPECT_TRUE(run["reclaimer"].contains(key)) << "reclaimer." << key;
    }
    for (const char* key : {"p50", "p99", "p999", "max"}) {
        EXPECT_TRUE(run["reclaimer"]["free_latency_ns"].contains(key)) << key;
    }
    EXPECT_EQ(run["config"]["free"], "amortized");
    EXPECT_EQ(run["trials"].size(), 3u);
    EXPECT_TRUE(run["validated"].get<bool>());
    EXPECT_GT(run["throughput_ops_per_s"].get<double>(), 0);
    EXPECT_FALSE(run["allocator"]["name"].get<std::string>().empty());
    // The median of three trials is one of them, between the min and max.
    std::vector<double> throughputs;
    for (const auto& t : run["trials"]) throughputs.push_back(t["throughput_ops_per_s"]);
    std::sort(throughputs.begin(), throughputs.end());
    EXPECT_DOUBLE_EQ(run["throughput_ops_per_s"].get<double>(), throughputs[1]);
}

TEST(Cli, EveryCombinationRunsAndValidates) {
    const run_result listed = smrbench("--list --json");
    ASSERT_EQ(listed.exit_code, 0) << listed.err;
    const auto list = nlohmann::json::parse(listed.out);
    ASSERT_EQ(list["combinations"].size(),
              list["data_structures"].size() * list["reclaimers"].size());
    std::size_t ran = 0;
    std::set<std::string> structures_run;
    for (const auto& combo : list["combinations"]) {
        if (!combo["valid"].get<bool>()) continue;  // refused without --allow-unsafe
        ++ran;
        structures_run.insert(combo["ds"].get<std::string>());
        for (const char* free : {"batch", "amortized"}) {
            const std::string args = std::string(quick) + " --json --ds " +
                                     combo["ds"].get<std::string>() + " --reclaimer " +
                                     combo["reclaimer"].get<std::string>() + " --free " + free;
            const run_result r = smrbench(args);
            // --quiet keeps a validation failure off stderr; its text is in
            // the JSON (exit code 1 still prints the object).
            ASSERT_EQ(r.exit_code, 0) << args << "\n" << r.err << r.out;
            EXPECT_TRUE(nlohmann::json::parse(r.out)["validated"].get<bool>()) << args;
        }
    }
    // Every structure runs under at least one reclaimer, and most pairs are valid.
    EXPECT_EQ(structures_run.size(), list["data_structures"].size());
    EXPECT_GT(ran * 2, list["combinations"].size()) << ran << " valid combinations";
}

// Validation that cannot fail proves nothing: the test build of smrbench
// (bench/faults.hpp) adds an error to the key sum the threads' updates add up
// to, and every structure's run must then fail validation with exit 1, the
// same run without the error passing. The smrbench users run has no such
// option.
TEST(Cli, AWrongKeySumFailsValidationForEveryStructure) {
    const auto list = nlohmann::json::parse(smrbench("--list --json").out);
    ASSERT_GE(list["data_structures"].size(), 14u);
    for (const auto& ds : list["data_structures"]) {
        const std::string name = ds.get<std::string>();
        const std::string base = "--ds " + name +
                                 " --reclaimer debra --threads 2 --key-range 64 --ops 500 "
                                 "--quiet --json";
        const run_result good = smrbench_faults(base);
        ASSERT_EQ(good.exit_code, 0) << base << "\n" << good.err;
        EXPECT_TRUE(nlohmann::json::parse(good.out)["validated"].get<bool>()) << name;
        const run_result bad = smrbench_faults(base + " --inject-key-sum-error 1");
        EXPECT_EQ(bad.exit_code, 1) << name << "\n" << bad.err;
        const auto run = nlohmann::json::parse(bad.out);
        EXPECT_FALSE(run["validated"].get<bool>()) << name;
        const auto& validation = run["trials"][0]["validation"];
        EXPECT_EQ(validation["expected_key_sum"].get<std::int64_t>(),
                  validation["key_sum"].get<std::int64_t>() + 1)
            << name;
        EXPECT_NE(validation["error"].get<std::string>().find("key sum"), std::string::npos)
            << name << ": " << validation["error"];
    }
    const run_result refused = smrbench("--inject-key-sum-error 1 --ops 10 --quiet");
    EXPECT_EQ(refused.exit_code, 2) << "the user build has no fault options";
    EXPECT_EQ(count_lines(refused.err), 1) << refused.err;
}

TEST(Cli, OpsRunsAFixedNumberOfOperations) {
    const run_result r = smrbench("--threads 3 --key-range 256 --ops 1000 --quiet --json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto run = nlohmann::json::parse(r.out);
    EXPECT_EQ(run["trials"][0]["operations"].get<std::uint64_t>(), 3000u);
}

// ---- bounded vs unbounded garbage, measured end to end -------------------------

TEST(Cli, StalledThreadMakesDebraGarbageGrow) {
    // A fixed operation count, long against a time slice and against the
    // epochs debra needs to get going (its peak garbage is a few tens of
    // thousands of nodes whatever the run's length: 40,000 operations
    // per thread left it at a third of the retirements).
    const std::string base =
        "--reclaimer debra --threads 2 --key-range 1024 --ops 1000000 --quiet --json";
    const auto stalled = nlohmann::json::parse(smrbench(base + " --stall").out);
    const auto free_running = nlohmann::json::parse(smrbench(base).out);
    const auto& s = stalled["reclaimer"];
    const auto& f = free_running["reclaimer"];
    ASSERT_GT(s["retired"].get<double>(), 10000);
    // With a thread stuck in an operation no epoch can complete: nothing is freed.
    EXPECT_EQ(s["freed"].get<std::uint64_t>(), 0u);
    EXPECT_GE(s["garbage_peak"].get<double>(), 0.99 * s["retired"].get<double>());
    // Without it, garbage stays a small fraction of what was retired.
    EXPECT_LT(f["garbage_peak"].get<double>(), 0.25 * f["retired"].get<double>());
    EXPECT_TRUE(stalled["validated"].get<bool>());
}

// The other side of the NBR paper's Figure 4c: every reclaimer whose traits say
// garbage_bounded keeps its peak garbage within what its algorithm allows
// while a thread sits inside an operation, on a structure it is safe with.
// Each worker reclaims once its list has grown by a bag (512) and keeps only
// what reservations pin. A reservation pins at most the nodes alive in one
// era: the list's live nodes (at most the key range) plus the nodes
// allocated while the era lasts (epoch_freq x T per worker, T the threads
// registered: the workers and the staller); hazard pointers and NBR pin
// fewer, one node per slot. The staller holds one era; each worker's
// traversal at most two. So the peak is at most
//   workers x bag + (1 + 2 x workers) x (key range + workers x epoch_freq x T),
// a bound no timing can break, and under a quarter of the retirements, where an
// epoch scheme with the same stall holds all of them (the test above).
/// Whether --list --json says that reclaimer `name` reads option `key`.
bool reads(const nlohmann::json& list, const std::string& key, const std::string& name) {
    for (const auto& option : list["options"]) {
        if (option["key"] != key) continue;
        if (option["reclaimers"].is_null()) return true;
        for (const auto& reader : option["reclaimers"]) {
            if (reader == name) return true;
        }
        return false;
    }
    ADD_FAILURE() << "no option " << key;
    return false;
}

TEST(Cli, StalledThreadLeavesBoundedReclaimersBounded) {
    const auto list = nlohmann::json::parse(smrbench("--list --json").out);
    int checked = 0;
    const double workers = 2, bag = 512, key_range = 256, epoch_freq = 50, registered = 3;
    const double bound =
        workers * bag + (1 + 2 * workers) * (key_range + workers * epoch_freq * registered);
    for (const auto& reclaimer : list["reclaimers"]) {
        if (!reclaimer["garbage_bounded"].get<bool>()) continue;
        const std::string name = reclaimer["name"];
        // A fixed operation count (about 20,000 retirements), not a duration.
        // --epoch-freq for the era schemes only: smrbench refuses it with the others.
        const std::string base = "--ds hm_list --reclaimer " + name +
                                 " --threads 2 --key-range 256 --bag-size 512 --ops 40000" +
                                 (reads(list, "epoch_freq", name) ? " --epoch-freq 50" : "") +
                                 " --quiet --json";
        const run_result free_running = smrbench(base);
        ASSERT_EQ(free_running.exit_code, 0) << base << "\n" << free_running.err;
        const run_result stalled = smrbench(base + " --stall");
        ASSERT_EQ(stalled.exit_code, 0) << base << " --stall\n" << stalled.err;
        const auto f = nlohmann::json::parse(free_running.out);
        const auto s = nlohmann::json::parse(stalled.out);
        EXPECT_TRUE(s["validated"].get<bool>()) << name;
        EXPECT_TRUE(s["config"]["stall"].get<bool>()) << name;
        const double without = f["reclaimer"]["garbage_peak"].get<double>();
        const double with = s["reclaimer"]["garbage_peak"].get<double>();
        const double retired = s["reclaimer"]["retired"].get<double>();
        ASSERT_GT(retired, 20 * bag) << name << ": too few retirements to tell";
        ASSERT_LT(bound, retired / 4) << "the bound must tell bounded from unbounded";
        EXPECT_LE(without, bound) << name;
        EXPECT_LE(with, bound) << name << ": peak garbage " << with << " with a stall, " << without
                               << " without, bound " << bound;
        ++checked;
    }
    EXPECT_GE(checked, 6) << "hp, he, ibr, wfe, nbr, nbrplus";
}

// What a held reference keeps alive (--stall-hold). Under lfrc the staller
// holds the queue's oldest item, whose next link keeps every node dequeued
// after it (each links to the next): all of the trial's garbage. Holding
// nothing (--stall) it pins nothing; hazard pointers pin the one node.
TEST(Cli, AHeldQueueNodeKeepsEveryLaterNodeUnderLfrcOnly) {
    const std::string base =
        "--ds ms_queue --threads 2 --key-range 256 --ops 20000 --quiet --json --reclaimer ";
    auto garbage_share = [&](const std::string& args) {
        // hp scans at every 64 retirements (the others read neither tuning).
        const bool hp = args.starts_with("hp ");
        const run_result r =
            smrbench(base + args + (hp ? " --bag-size 64 --hp-scan-factor 1" : ""));
        EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.err;
        const auto run = nlohmann::json::parse(r.out);
        EXPECT_TRUE(run["validated"].get<bool>()) << args;
        EXPECT_TRUE(run["config"]["stall"].get<bool>()) << args;
        const double retired = run["reclaimer"]["retired"].get<double>();
        EXPECT_GT(retired, 10000) << args;
        return run["reclaimer"]["garbage_end"].get<double>() / retired;
    };
    EXPECT_GE(garbage_share("lfrc --stall-hold"), 0.9);
    EXPECT_LE(garbage_share("lfrc --stall"), 0.1);
    EXPECT_LE(garbage_share("hp --stall-hold"), 0.1);
    EXPECT_GE(garbage_share("debra --stall-hold"), 0.9) << "epochs pin everything either way";
}

TEST(Cli, StallHoldIsRefusedWhereThereIsNoFirstNodeToHold) {
    const run_result r = smrbench("--ds lazylist --stall-hold --duration 0.1");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("--stall-hold applies only to hm_list, ms_queue, hash_set, cr_list, "
                         "cr_hash_set (--ds lazylist has no first node to hold)"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

/// The bad values for one number option of smrbench's own description
/// (--list --json "options"): not a number, not finite, not decimal, out of
/// its type, out of its range.
std::vector<std::string> bad_values(const nlohmann::json& option) {
    std::vector<std::string> bad = {"", "abc", "nan", "inf", "-inf", "0x10", "12abc", "1,5"};
    const bool integer = option["type"] == "int";
    if (integer) {
        for (const char* v : {"010", "00", "1.5", "1e3", "+1", "99999999999999999999999"})
            bad.emplace_back(v);
    }
    if (!option["minimum"].is_null()) {
        const double low = option["minimum"].get<double>();
        const double high = option["maximum"].get<double>();
        char text[64];
        std::snprintf(text, sizeof text, integer ? "%.0f" : "%.6g", integer ? low - 1 : low / 2);
        if (low != 0 || integer) bad.emplace_back(text);  // below (for ints: maybe negative)
        std::snprintf(text, sizeof text, integer ? "%.0f" : "%.6g", integer ? high + 1 : high * 2);
        bad.emplace_back(text);
    } else if (integer) {
        bad.emplace_back("-1");  // unranged integers here are unsigned
    }
    return bad;
}

// Issue 25's table-driven test: every number option, every kind of bad value:
// refused before anything runs, one line on stderr, exit 2, nothing on stdout
// and no output file created.
TEST(Cli, EveryNumberOptionRefusesEveryBadValue) {
    const auto list = nlohmann::json::parse(smrbench("--list --json").out);
    const fs::path timeline =
        fs::temp_directory_path() / ("smrbench-bad-" + std::to_string(::getpid()) + ".json");
    int cases = 0;
    for (const auto& option : list["options"]) {
        if (option["type"] != "int" && option["type"] != "float") continue;
        const std::string flag = option["flag"];
        // Under every command that takes it: the set benchmark (no subcommand
        // name), threadtest, layout.
        for (const auto& name : option["commands"]) {
            const bool of_set = name == "set";
            const std::string command = of_set ? "" : name.get<std::string>() + " ";
            const std::string rest = of_set
                                         ? " --ops 1 --quiet --json --timeline " + timeline.string()
                                         : " --quiet --json";
            for (const std::string& value : bad_values(option)) {
                const std::string args = command + flag + " '" + value + "'" + rest;
                const run_result r = smrbench(args);
                EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
                EXPECT_EQ(count_lines(r.err), 1) << args << "\n" << r.err;
                EXPECT_NE(r.err.find(flag), std::string::npos) << args << ": " << r.err;
                EXPECT_EQ(r.out, "") << args;
                EXPECT_FALSE(fs::exists(timeline)) << args;
                fs::remove(timeline);
                ++cases;
            }
        }
    }
    std::printf("options x bad values: %d\n", cases);
    EXPECT_GE(cases, 350) << "fewer number options than the table has";
}

TEST(Cli, APrefillThatCannotFitInMemoryIsRefusedBeforeItStarts) {
    const run_result r = smrbench("--ds lazylist --key-range 1099511627776 --ops 1");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("of memory available"), std::string::npos) << r.err;
    EXPECT_LT(r.seconds, 5.0) << "refused, not attempted";
}

// Each structure's default --key-range gives a run a newcomer can wait for:
// a list's (whose prefill is quadratic and every operation walks half of it)
// is 10,000 keys, the others' 200,000; --list says which is whose.
TEST(Cli, EachStructureHasTheKeyRangeItsListingGives) {
    const auto listing = nlohmann::json::parse(smrbench("--list --json").out);
    const auto& defaults = listing["default_key_range"];
    ASSERT_EQ(defaults.size(), listing["data_structures"].size());
    EXPECT_EQ(defaults["hm_list"], 10000);
    EXPECT_EQ(defaults["stm_list"], 10000);
    EXPECT_EQ(defaults["dgt_bst"], 200000);
    EXPECT_EQ(defaults["hash_set"], 200000);
    for (const char* ds : {"hm_list", "dgt_bst"}) {
        const run_result r =
            smrbench(std::string("--ds ") + ds + " --threads 1 --ops 1 --quiet --json");
        ASSERT_EQ(r.exit_code, 0) << ds << ": " << r.err;
        EXPECT_EQ(nlohmann::json::parse(r.out)["config"]["key_range"], defaults[ds]) << ds;
    }
    const run_result given = smrbench("--ds hm_list --key-range 64 --threads 1 --ops 1 --json");
    EXPECT_EQ(nlohmann::json::parse(given.out)["config"]["key_range"], 64);
    EXPECT_NE(smrbench("--list").out.find("hm_list (10000)"), std::string::npos);
}

// The STM's lock table (16 bytes a lock, of address space reserved when it is
// made) that cannot fit in the address space smrbench may use is refused up
// front, with the estimate, as a prefill that cannot fit is.
TEST(Cli, AnStmLockTableThatCannotFitIsRefusedBeforeItStarts) {
    const run_result r = run_binary("ulimit -v 4000000; exec " + std::string(SMRBENCH_PATH),
                                    "--ds stm_list --ort-bits 30 --ops 1 --quiet");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("--ort-bits 30: the STM's table of 2^30 locks needs 16.0 GiB"),
              std::string::npos)
        << r.err;
    EXPECT_LT(r.seconds, 5.0) << "refused, not attempted";
}

// The lock table costs the memory of the entries a run touches (zero pages
// until then, as TinySTM's static array): 2^28 locks, 4 GiB of address space,
// were 4 GiB of resident memory written before the run began.
TEST(Cli, AnStmLockTableCostsOnlyTheEntriesItUses) {
    const run_result r =
        smrbench("--ds stm_list --ort-bits 28 --threads 1 --key-range 256 --ops 2000 --json");
    if (r.exit_code == 2 && r.err.find("more than the") != std::string::npos) {
        GTEST_SKIP() << "less than 4 GiB of memory here: " << r.err;
    }
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto run = nlohmann::json::parse(r.out);
    EXPECT_TRUE(run["validated"].get<bool>());
    EXPECT_LT(run["peak_rss_bytes"].get<double>(), 256.0 * (1 << 20));
}

// A run the compatibility table calls unsafe says so in its table, not only
// in the refusal that --allow-unsafe overrode.
TEST(Cli, AnUnsafeRunIsMarkedInItsTable) {
    const run_result r = smrbench(
        "--ds lazylist --reclaimer hp --allow-unsafe --threads 1 --key-range 64 --ops 1000 "
        "--quiet");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("UNSAFE    hp is unsafe with lazylist"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("1000 operations per thread"), std::string::npos) << r.out;
    const run_result safe =
        smrbench("--ds lazylist --reclaimer debra --threads 1 --key-range 64 --ops 1000 --quiet");
    EXPECT_EQ(safe.out.find("UNSAFE"), std::string::npos) << safe.out;
}

/// hm_list's prefill is quadratic (each insert walks the sorted list), so
/// 40000 keys take several seconds: long enough for progress lines every 2 s.
TEST(Cli, ALongPrefillReportsItsProgressUnlessQuiet) {
    const std::string args = "--ds hm_list --reclaimer none --threads 1 --key-range 80000 --ops 1";
    const run_result r = smrbench(args + " --json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto report = nlohmann::json::parse(r.out);  // stdout stays one JSON object
    const double prefill_seconds = report["trials"][0]["prefill_seconds"];
    ASSERT_GT(prefill_seconds, 2.5) << "too fast to report: make the prefill longer";

    const std::regex line(R"(smrbench: prefill (\d+) of 40000 keys \((\d+)%\), (\d+) s)");
    std::istringstream lines(r.err);
    std::string text;
    long long last_done = -1, last_second = 0;
    int reports = 0;
    while (std::getline(lines, text)) {
        std::smatch m;
        if (!std::regex_match(text, m, line)) continue;
        const long long done = std::stoll(m[1]), percent = std::stoll(m[2]);
        const long long second = std::stoll(m[3]);
        EXPECT_GE(done, last_done) << text;
        EXPECT_LE(done, 40000) << text;
        EXPECT_NEAR(static_cast<double>(percent), 100.0 * static_cast<double>(done) / 40000, 1.0)
            << text;
        EXPECT_GE(second, last_second + 1) << "one line per 2 s: " << text;
        last_done = done;
        last_second = second;
        ++reports;
    }
    EXPECT_GE(reports, 1) << r.err;
    EXPECT_LE(reports, static_cast<int>(prefill_seconds / 2) + 1) << r.err;

    const run_result quiet = smrbench(args + " --quiet");
    ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
    EXPECT_EQ(quiet.err.find("prefill"), std::string::npos) << quiet.err;
}

/// Hart et al.'s measures (Section 4): execution time per operation is the
/// measured interval over all threads' operations, CPU time that times the
/// worker threads; the run reports its median trial's and the CPUs used.
TEST(Cli, ReportsHartsTimePerOperation) {
    const run_result r =
        smrbench("--ds lazylist --reclaimer debra --threads 3 --key-range 64 --ops 4000 --json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto run = nlohmann::json::parse(r.out);
    const auto& trial = run["trials"][0];
    const double operations = trial["operations"];
    const double exec_ns = trial["exec_time_per_op_ns"];
    ASSERT_EQ(operations, 3 * 4000);
    EXPECT_NEAR(exec_ns, double(trial["measured_seconds"]) * 1e9 / operations, 1e-6 * exec_ns);
    EXPECT_NEAR(double(trial["cpu_time_per_op_ns"]), 3 * exec_ns, 1e-6 * exec_ns);
    EXPECT_EQ(run["exec_time_per_op_ns"], trial["exec_time_per_op_ns"]);  // one trial: the median
    EXPECT_EQ(run["cpu_time_per_op_ns"], trial["cpu_time_per_op_ns"]);
    const int cpus = run["machine"]["cpus"];
    EXPECT_GE(cpus, 1);
    EXPECT_LE(cpus, int(run["machine"]["hardware_threads"]));
    EXPECT_EQ(run["cpus_used"], std::min(3, cpus));
}

/// Hart's read-only runs on a structure of exactly N elements ("one
/// element", and lists of 1 to 100 for the traversal figures): every key of
/// a key range of N prefilled, no update, every contains finds its key.
TEST(Cli, ReadOnlyRunsOnExactlyNElements) {
    for (const int n : {1, 100}) {
        for (const char* ds : {"hm_list", "lazylist"}) {
            const run_result r = smrbench(std::string("--ds ") + ds +
                                          " --reclaimer debra --threads 2 --insert 0 --erase 0 "
                                          "--key-range " +
                                          std::to_string(n) + " --prefill " + std::to_string(n) +
                                          " --ops 2000 --json");
            ASSERT_EQ(r.exit_code, 0) << ds << " " << n << ": " << r.err;
            const auto run = nlohmann::json::parse(r.out);
            const auto& trial = run["trials"][0];
            EXPECT_EQ(run["config"]["contains"], 100);
            EXPECT_EQ(trial["prefill_size"], n) << ds;
            EXPECT_EQ(trial["validation"]["size"], n) << ds;
            EXPECT_EQ(trial["validation"]["key_sum"], std::int64_t(n) * (n - 1) / 2) << ds;
            EXPECT_EQ(run["reclaimer"]["retired"], 0) << ds << ": nothing to reclaim";
            EXPECT_TRUE(run["validated"]) << ds;
        }
    }
}

/// --quiescent-every N: a qsbr worker declares a quiescent state every N
/// operations (Hart et al.: 100). Alone and declaring none during the run,
/// it never lets the epoch advance; alone, each state it declares advances it
/// (Hart's fuzzy barrier tries at every quiescent state).
TEST(Cli, QsbrDeclaresQuiescentStatesEveryNOperations) {
    const std::string args =
        "--ds lazylist --reclaimer qsbr --threads 1 --key-range 64 --prefill none --ops 4000 "
        "--json --quiescent-every ";
    const run_result every = smrbench(args + "1");
    const run_result never = smrbench(args + "5000");
    const run_result harts = smrbench(args + "100");
    for (const run_result* r : {&every, &never, &harts}) {
        ASSERT_EQ(r->exit_code, 0) << r->err;
        EXPECT_TRUE(nlohmann::json::parse(r->out)["validated"]);
    }
    const auto epochs = [](const run_result& r) -> std::uint64_t {
        return nlohmann::json::parse(r.out)["reclaimer"]["epochs"];
    };
    EXPECT_EQ(epochs(never), 0u);
    EXPECT_GE(epochs(harts), 4000u / 100);
    EXPECT_GE(epochs(every), 4000u);
    EXPECT_EQ(nlohmann::json::parse(harts.out)["config"]["quiescent_every"], 100);
}

// --check: the whole command line is checked, nothing runs (a 1000 s run
// answers at once), nothing is printed; a refusal is the run's own.
TEST(Cli, CheckValidatesTheCommandLineAndRunsNothing) {
    for (const char* args : {"--duration 1000 --threads 64 --check",
                             "--duration 1000 --ds ms_queue --insert 50 --erase 50 --check",
                             "threadtest --threads 4 --check", "layout --check"}) {
        const run_result r = smrbench(args);
        EXPECT_EQ(r.exit_code, 0) << args << ": " << r.err;
        EXPECT_EQ(r.out, "") << args;
        EXPECT_EQ(r.err, "") << args;
        EXPECT_LT(r.seconds, 5.0) << args << ": it ran";
    }
    const run_result refused = smrbench("--ds dgt_bst --restart-from-head --check");
    EXPECT_EQ(refused.exit_code, 2);
    EXPECT_EQ(count_lines(refused.err), 1) << refused.err;
    EXPECT_NE(refused.err.find("--restart-from-head"), std::string::npos) << refused.err;
}

TEST(Cli, SelectedAllocatorReallyServesMalloc) {
    if (sanitizer_build()) GTEST_SKIP() << "sanitizer builds refuse LD_PRELOAD allocators";
    for (const char* name : {"jemalloc", "tcmalloc", "mimalloc", "tbbmalloc"}) {
        const run_result r = smrbench(std::string(quick) + " --json --alloc " + name);
        ASSERT_EQ(r.exit_code, 0) << name << ": " << r.err;
        const auto run = nlohmann::json::parse(r.out);
        EXPECT_EQ(run["allocator"]["name"], name);
        EXPECT_FALSE(run["allocator"]["version"].get<std::string>().empty()) << name;
        EXPECT_TRUE(run["validated"].get<bool>()) << name;
    }
}

// jemalloc's own evidence of remote batch free, over the measured interval:
// freed batches overflow the thread caches, which flush into their bins under
// the bins' locks. An allocator without such counters reports null.
TEST(Cli, JemallocCountsItsCacheFlushesAndBinLocks) {
    if (sanitizer_build()) GTEST_SKIP() << "sanitizer builds refuse LD_PRELOAD allocators";
    const std::string base =
        "--ds hash_set --threads 2 --key-range 20000 --ops 50000 --quiet --json --alloc ";
    const run_result jemalloc = smrbench(base + "jemalloc");
    ASSERT_EQ(jemalloc.exit_code, 0) << jemalloc.err;
    const auto run = nlohmann::json::parse(jemalloc.out);
    const auto& counters = run["allocator"]["counters"];
    ASSERT_TRUE(counters.is_object()) << run["allocator"];
    EXPECT_EQ(counters, run["trials"][0]["allocator_counters"]) << "one trial: the median's";
    const auto flushes = counters["tcache_flushes"].get<std::uint64_t>();
    const auto locks = counters["bin_lock_acquisitions"].get<std::uint64_t>();
    EXPECT_GT(flushes, 0u);
    EXPECT_GT(locks, 0u);
    EXPECT_LE(counters["bin_lock_waits"].get<std::uint64_t>(), locks);
    EXPECT_GE(counters["bin_lock_wait_seconds"].get<double>(), 0.0);
    for (const char* name : {"glibc", "tcmalloc"}) {
        const run_result other = smrbench(base + name);
        ASSERT_EQ(other.exit_code, 0) << name << ": " << other.err;
        const auto o = nlohmann::json::parse(other.out);
        EXPECT_TRUE(o["allocator"]["counters"].is_null()) << name;
        EXPECT_TRUE(o["trials"][0]["allocator_counters"].is_null()) << name;
    }
}

TEST(Cli, RecordingWritesVersionedFiles) {
    const fs::path dir = fs::temp_directory_path() / ("smrbench-rec-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const run_result r = smrbench(std::string(quick) + " --json --trials 2 --timeline " +
                                  (dir / "run.timeline").string() + " --garbage-series " +
                                  (dir / "run.garbage").string() + " --sample-ms 10");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (int t = 0; t < 2; ++t) {
        std::ifstream timeline(dir / ("run.t" + std::to_string(t) + ".timeline"));
        std::string header, columns;
        ASSERT_TRUE(std::getline(timeline, header));
        const auto h = nlohmann::json::parse(header);
        EXPECT_EQ(h["format"], "smrlab-timeline");
        EXPECT_EQ(h["version"], 1);
        EXPECT_EQ(h["trial"], t);
        std::getline(timeline, columns);
        EXPECT_EQ(columns, "thread,kind,start_ns,end_ns,value");
        std::ifstream series(dir / ("run.t" + std::to_string(t) + ".garbage"));
        ASSERT_TRUE(std::getline(series, header));
        const auto g = nlohmann::json::parse(header);
        EXPECT_EQ(g["format"], "smrlab-garbage-series");
        EXPECT_EQ(g["version"], 2);
        std::getline(series, columns);
        EXPECT_EQ(columns, "time_ns,epoch,thread,garbage");
        std::string row;
        EXPECT_TRUE(std::getline(series, row)) << "no thread began an epoch";
    }
    const auto run = nlohmann::json::parse(r.out);
    EXPECT_FALSE(run["trials"][0]["samples"].empty());
    fs::remove_all(dir);
}

}  // namespace

// ---- the bounded pool (--pool-nodes) --------------------------------------------

TEST(Pool, ARunReportsThePoolAndTheAllocatorBelowIt) {
    // One thread: with two, a worker descheduled inside an operation (a
    // loaded machine: 3 runs in 15 with both cores busy) held the epoch
    // while the other filled the pool, and the run ended pool_exhausted.
    const run_result r =
        smrbench("--threads 1 --key-range 256 --duration 0.05 --quiet --json --pool-nodes 100000");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto run = nlohmann::json::parse(r.out);
    EXPECT_EQ(run["config"]["pool_nodes"].get<std::uint64_t>(), 100000u);
    EXPECT_EQ(run["config"]["on_empty"], "yield");
    EXPECT_EQ(run["status"], "ok");
    EXPECT_FALSE(run["allocator"]["name"].get<std::string>().empty());
    const auto& pool = run["allocator"]["pool"];
    for (const char* key : {"capacity", "on_empty", "carved", "in_use_peak", "failures", "retries",
                            "gave_up", "wait_seconds"}) {
        EXPECT_TRUE(pool.contains(key)) << "allocator.pool." << key;
    }
    EXPECT_EQ(pool["capacity"].get<std::uint64_t>(), 100000u);
    EXPECT_GT(pool["carved"].get<std::uint64_t>(), 0u);
    EXPECT_EQ(pool["gave_up"].get<std::uint64_t>(), 0u);
    EXPECT_TRUE(run["validated"].get<bool>());
}

TEST(Pool, WithoutAPoolThePoolFieldsAreNull) {
    const run_result r = smrbench(std::string(quick) + " --json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto run = nlohmann::json::parse(r.out);
    EXPECT_EQ(run["config"]["pool_nodes"].get<std::uint64_t>(), 0u);
    EXPECT_TRUE(run["config"]["on_empty"].is_null());
    EXPECT_TRUE(run["allocator"]["pool"].is_null());
    EXPECT_EQ(run["status"], "ok");
}

TEST(Pool, APoolTooSmallForThePrefillIsOneLineAndExitCode1) {
    const run_result r = smrbench(
        "--threads 2 --key-range 4096 --duration 0.05 --quiet --json "
        "--pool-nodes 100 --on-empty spin");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("ran out during the prefill"), std::string::npos) << r.err;
}

/// With `fail` and a leaking reclaimer the pool surely runs out: every
/// structure must give operations up cleanly and still validate, and the
/// trial is a result (exit 0, status pool_exhausted), not an error.
TEST(Pool, FailModeOnEveryStructureGivesUpCleanlyAndValidates) {
    const auto list = nlohmann::json::parse(smrbench("--list --json").out);
    for (const auto& ds : list["data_structures"]) {
        const std::string name = ds.get<std::string>();
        const bool queue = name == "ms_queue";
        // lock_list frees what it erases at once, even with none: only more
        // live keys than the pool holds exhaust it.
        const bool frees_at_once = name == "lock_list";
        // stm_list's nodes are malloc blocks: it refuses a pool (BadInput).
        if (name.starts_with("stm_")) continue;
        for (const char* reclaimer : {"none", "debra"}) {
            const std::string args =
                std::string("--threads 3 --duration 0.2 --quiet --json ") +
                "--pool-nodes 300 --on-empty fail --ds " + name + " --reclaimer " + reclaimer +
                (queue ? " --prefill 16" : "") +
                (frees_at_once ? " --key-range 1024 --prefill none" : " --key-range 64");
            const run_result r = smrbench(args);
            ASSERT_EQ(r.exit_code, 0) << args << "\n" << r.err << r.out;
            const auto run = nlohmann::json::parse(r.out);
            EXPECT_TRUE(run["validated"].get<bool>()) << args;
            const auto& trial = run["trials"][0];
            const auto& pool = trial["pool"];
            EXPECT_LE(pool["carved"].get<std::uint64_t>(), 300u) << args;
            EXPECT_GE(pool["gave_up"].get<std::uint64_t>(),
                      trial["failed_operations"].get<std::uint64_t>())
                << args;
            if (std::string(reclaimer) == "none") {
                EXPECT_EQ(run["status"], "pool_exhausted") << args;
                EXPECT_GT(trial["failed_operations"].get<std::uint64_t>(), 0u) << args;
                EXPECT_GT(trial["operations"].get<std::uint64_t>(), 0u) << args;
            }
        }
    }
}

/// Hart's Figure 14 in miniature: a stalled thread holds up QSBR's grace
/// periods, the pool runs dry and the workers busy-wait for it. The trial
/// must still end at --duration with the failures counted.
/// An update-only queue with a stalled thread, as the tests below run it.
const std::string stalled_queue =
    "--ds ms_queue --insert 50 --erase 50 --prefill 100 --stall --quiet --json ";

TEST(Pool, AStalledThreadWithQsbrAndSpinEndsOnTime) {
    const run_result r = smrbench(stalled_queue +
                                  "--reclaimer qsbr --threads 3 --duration 0.5 "
                                  "--pool-nodes 2000 --on-empty spin");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_LT(r.seconds, 20.0) << "the trial did not end on time";
    const auto run = nlohmann::json::parse(r.out);
    EXPECT_EQ(run["status"], "pool_exhausted");
    EXPECT_TRUE(run["validated"].get<bool>());
    const auto& pool = run["allocator"]["pool"];
    EXPECT_GT(pool["failures"].get<std::uint64_t>(), 0u);
    EXPECT_GT(pool["retries"].get<std::uint64_t>(), 0u);
    EXPECT_GT(pool["wait_seconds"].get<double>(), 0.0);
    EXPECT_EQ(pool["in_use_peak"].get<std::uint64_t>(), 2000u);
}

/// --ops has no duration: when every worker waits for memory that only the
/// stalled thread could release, the deadlock watch must end the trial.
TEST(Pool, OpsModeEndsWhenEveryWorkerWaitsForever) {
    const run_result r = smrbench(stalled_queue +
                                  "--reclaimer qsbr --threads 2 --ops 10000000 "
                                  "--pool-nodes 2000 --on-empty yield");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_LT(r.seconds, 30.0) << "the deadlock watch did not end the trial";
    const auto run = nlohmann::json::parse(r.out);
    EXPECT_EQ(run["status"], "pool_exhausted");
    EXPECT_TRUE(run["validated"].get<bool>());
    EXPECT_LT(run["trials"][0]["operations"].get<std::uint64_t>(), 20000000u);
}

/// Hazard pointers bound their garbage: the same stall does not exhaust a
/// pool with room for that bound and for the queue itself (a 50/50 queue's
/// length is a random walk: a few thousand items after a million operations).
TEST(Pool, AStalledThreadWithHazardPointersKeepsRunning) {
    const run_result r = smrbench(stalled_queue +
                                  "--reclaimer hp --bag-size 64 --threads 3 --duration 0.3 "
                                  "--pool-nodes 50000 --on-empty spin");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto run = nlohmann::json::parse(r.out);
    EXPECT_EQ(run["status"], "ok");
    EXPECT_TRUE(run["validated"].get<bool>());
    EXPECT_EQ(run["allocator"]["pool"]["gave_up"].get<std::uint64_t>(), 0u);
}
