// `smrbench threadtest` and `smrbench layout` as a user meets them: bad input
// refused with one line and exit code 2; a run counts exactly the pairs it
// was asked for and checks its blocks; the layout reports what the
// allocator/STM study draws (glibc's 32-byte chunks and 64 MB-aligned arenas,
// the 16-byte classes of the others).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <string>

#include "smrbench_process.hpp"

namespace {

using namespace smrbench_test;
using nlohmann::json;

class ThreadtestBadInput : public testing::TestWithParam<bad_input_case> {};

TEST_P(ThreadtestBadInput, IsRefusedWithOneLineAndExitCode2) { expect_refused(GetParam()); }

INSTANTIATE_TEST_SUITE_P(
    Cli, ThreadtestBadInput,
    testing::Values(bad_input_case{"threadtest --block-size 0", "--block-size"},
                    bad_input_case{"threadtest --block-size 2000000000", "--block-size"},
                    bad_input_case{"threadtest --objects -1", "--objects"},
                    bad_input_case{"threadtest --alloc no_such_alloc", "no_such_alloc"},
                    bad_input_case{"threadtest --pin everywhere", "everywhere"},
                    bad_input_case{"threadtest --ds lazylist", "--ds"},
                    bad_input_case{"threadtest --blocks 8", "--blocks"},
                    bad_input_case{"--threads 4 threadtest", "--threads"},
                    bad_input_case{"--ds lazylist threadtest", "--ds"},
                    bad_input_case{"threadtest stray_positional", "stray_positional"},
                    bad_input_case{
                        "threadtest --threads 4096 --objects 16777216 --block-size 1073741824",
                        "memory"},
                    bad_input_case{"layout --threads 2", "--threads"},
                    bad_input_case{"layout --objects 8", "--objects"},
                    bad_input_case{"layout --blocks 1", "--blocks"},
                    bad_input_case{"layout --ort-bits 0", "--ort-bits"},
                    bad_input_case{"layout --ort-shift 4", "--ort-shift"},
                    bad_input_case{"layout --blocks 4194304 --block-size 1073741824", "memory"},
                    bad_input_case{"threadtest layout", "layout"}),
    bad_input_name);

TEST(Threadtest, HelpNamesItsOptionsAndExitsZero) {
    const run_result r = smrbench("threadtest --help");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    for (const char* flag : {"--block-size", "--objects", "--alloc", "--threads", "--ops"}) {
        EXPECT_NE(r.out.find(flag), std::string::npos) << flag;
    }
    EXPECT_EQ(r.out.find("--reclaimer"), std::string::npos) << "a set-benchmark option";
}

json run_json(const std::string& args) {
    const run_result r = smrbench(args + " --quiet --json");
    EXPECT_EQ(r.exit_code, 0) << args << ": " << r.err;
    EXPECT_EQ(count_lines(r.out), 1) << r.out;
    return json::parse(r.out);
}

TEST(Threadtest, ThePapersFormCountsExactlyTheRequestedPairs) {
    const json run = run_json("threadtest --threads 3 --block-size 16 --ops 10000 --trials 2");
    EXPECT_EQ(run["benchmark"], "threadtest");
    EXPECT_EQ(run["config"]["block_size"], 16);
    EXPECT_EQ(run["config"]["objects"], 0);
    EXPECT_FALSE(run["config"].contains("ds")) << "a set-benchmark option in the config";
    ASSERT_EQ(run["trials"].size(), 2u);
    for (const json& trial : run["trials"]) {
        EXPECT_EQ(trial["pairs"], 30000);
        EXPECT_TRUE(trial["validated"].get<bool>()) << trial;
        EXPECT_GT(trial["pairs_per_s"].get<double>(), 0);
    }
    EXPECT_TRUE(run["validated"].get<bool>());
    EXPECT_EQ(run["throughput_ops_per_s"], run["pairs_per_s"]);
    EXPECT_LE(run["pairs_per_s_min"].get<double>(), run["pairs_per_s"].get<double>());
    EXPECT_GE(run["pairs_per_s_max"].get<double>(), run["pairs_per_s"].get<double>());
}

TEST(Threadtest, HoardsFormRunsRoundsOfObjects) {
    const json run = run_json("threadtest --threads 2 --block-size 100 --objects 500 --ops 7");
    EXPECT_EQ(run["trials"][0]["pairs"], 2 * 500 * 7);
    EXPECT_TRUE(run["validated"].get<bool>());
}

TEST(Threadtest, OddSizesAndOneByteBlocksAreChecked) {
    for (const char* form : {" --objects 64 --ops 20", " --ops 500"}) {
        for (const char* size : {"1", "7", "9", "4096", "100000"}) {
            const json run = run_json(std::string("threadtest --check-blocks --block-size ") +
                                      size + form + " --threads 2");
            EXPECT_TRUE(run["validated"].get<bool>()) << size << form;
        }
    }
}

TEST(Threadtest, ThePapersLoopWritesNothingUnlessAskedToCheckBlocks) {
    const json pure = run_json("threadtest --ops 1000 --threads 2");
    EXPECT_EQ(pure["config"]["check_blocks"], false);
    EXPECT_TRUE(pure["validated"].get<bool>());
    EXPECT_EQ(pure["trials"][0]["pairs"], 2000);
    const json checked = run_json("threadtest --ops 1000 --threads 2 --check-blocks");
    EXPECT_EQ(checked["config"]["check_blocks"], true);
    EXPECT_TRUE(checked["validated"].get<bool>());
    EXPECT_EQ(checked["trials"][0]["pairs"], 2000);
}

TEST(Threadtest, TheHumanTableNamesTheAllocatorAndTheMedian) {
    const run_result r = smrbench("threadtest --ops 1000 --quiet");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("malloc/free pairs per second"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("validated"), std::string::npos) << r.out;
}

TEST(Threadtest, EveryAllocatorServesItsOwnRun) {
    if (sanitizer_build()) GTEST_SKIP() << "sanitizer builds refuse LD_PRELOAD allocators";
    for (const char* name : {"jemalloc", "tcmalloc", "mimalloc", "tbbmalloc"}) {
        const json run = run_json(std::string("threadtest --ops 2000 --alloc ") + name);
        EXPECT_EQ(run["allocator"]["name"], name);
        EXPECT_TRUE(run["validated"].get<bool>()) << name;
    }
}

// ---- layout -------------------------------------------------------------------

const json& at_shift(const json& rows, unsigned shift) {
    for (const json& row : rows) {
        if (row["shift"] == shift) return row;
    }
    ADD_FAILURE() << "no row for shift " << shift;
    return rows[0];
}

TEST(Layout, GlibcKeepsSixteenByteBlocksInStripesOfTheirOwn) {
    const json layout = run_json("layout --block-size 16");
    EXPECT_EQ(layout["benchmark"], "layout");
    EXPECT_TRUE(layout["validated"].get<bool>());
    const json& alone = layout["one_thread"];
    EXPECT_EQ(alone["distance"]["mode_bytes"], 32) << "glibc's smallest chunk";
    EXPECT_EQ(at_shift(alone["shared_lock"], 5)["sharing"], 0);
    EXPECT_EQ(at_shift(alone["shared_lock"], 4)["sharing"], 0);
}

// The paper's second mechanism (Section 5, hash set): two threads' arenas
// are 64 MB-aligned, so a block at the same offset in each maps to the same
// versioned lock. A random placement would collide a handful of times.
TEST(Layout, GlibcArenasMakeTwoThreadsBlocksCollide) {
    const json layout = run_json("layout --block-size 16 --blocks 2048");
    for (unsigned shift : {4U, 5U}) {
        const json& cross = at_shift(layout["two_threads"]["cross_thread"], shift);
        EXPECT_GT(cross["collisions_pct"].get<double>(), 90) << cross;
        EXPECT_LT(cross["random_expectation"].get<double>(), 20) << cross;
    }
    const std::int64_t apart = layout["two_threads"]["distance"]["mode_bytes"];
    EXPECT_EQ(std::abs(apart) % (std::int64_t{64} << 20), 0) << "arenas 64 MB-aligned";
}

TEST(Layout, SixteenByteClassesPutTwoBlocksInAStripeOfThirtyTwo) {
    if (sanitizer_build()) GTEST_SKIP() << "sanitizer builds refuse LD_PRELOAD allocators";
    for (const char* name : {"jemalloc", "tcmalloc", "mimalloc", "tbbmalloc"}) {
        const json layout = run_json(std::string("layout --block-size 16 --alloc ") + name);
        const json& alone = layout["one_thread"];
        EXPECT_EQ(std::abs(alone["distance"]["mode_bytes"].get<std::int64_t>()), 16) << name;
        EXPECT_GT(at_shift(alone["shared_lock"], 5)["sharing_pct"].get<double>(), 40) << name;
        EXPECT_EQ(at_shift(alone["shared_lock"], 4)["sharing"], 0) << name;
    }
}

TEST(Layout, TheSummaryNamesEveryShift) {
    const run_result r = smrbench("layout --block-size 48 --blocks 256");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (const char* text : {"one thread", "two threads", "shift 4", "shift 5", "shift 6"}) {
        EXPECT_NE(r.out.find(text), std::string::npos) << text << " in " << r.out;
    }
}

// A block of many stripes costs layout no more than a small one: the lock
// runs of two blocks are compared in O(1) (a pairwise comparison took hours
// here: 65,536 locks per 1 MiB block at shift 4).
TEST(Layout, BlocksOfManyStripesAreMeasuredInOnePass) {
    const json layout = run_json("layout --block-size 1048576 --blocks 32");
    EXPECT_TRUE(layout["validated"].get<bool>());
    const json& alone = at_shift(layout["one_thread"]["shared_lock"], 4);
    EXPECT_EQ(alone["pairs"], 31);
    EXPECT_LE(alone["sharing"].get<int>(), 31);
}

// A layout that runs long (a large --blocks: every turn is a handoff between
// two threads) reports its progress on stderr every two seconds, never on
// stdout, and not with --quiet. The test build sleeps 250 us a turn, so that
// 6,000 blocks take at least 3 s whatever the machine.
TEST(Layout, ALongRunReportsItsProgressUnlessQuiet) {
    const std::string args = "layout --blocks 6000 --inject-turn-delay-us 250 --json";
    const run_result r = smrbench_faults(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(json::parse(r.out)["validated"].get<bool>());  // stdout stays one JSON object
    ASSERT_GT(r.seconds, 2.5) << r.err;
    const std::string line = "smrbench: layout: ";
    int reports = 0;
    for (std::size_t at = r.err.find(line); at != std::string::npos;
         at = r.err.find(line, at + 1)) {
        EXPECT_NE(r.err.find(" of 12000 blocks allocated in turns (", at), std::string::npos);
        ++reports;
    }
    EXPECT_GE(reports, 1) << r.err;
    EXPECT_LE(reports, static_cast<int>(r.seconds / 2) + 1) << r.err;
    EXPECT_EQ(smrbench_faults(args + " --quiet").err.find(line), std::string::npos);
}

}  // namespace
