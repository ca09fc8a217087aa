// smrbench under the limits of a shared server: a thread it cannot create
// (ulimit -u, ulimit -v) or memory that runs out during the prefill ends the
// run with one line and exit code 1, the threads it had started stopped and
// joined, never with std::terminate's abort (exit 134). Each case runs
// smrbench in a shell that sets the limit first.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "smrbench_process.hpp"

namespace {

using namespace smrbench_test;

/// Ended cleanly by a failure: exit 1, one line naming `mentions`, no abort.
void expect_failed_cleanly(const run_result& r, const std::string& mentions) {
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_EQ(r.err.rfind("smrbench: error: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(mentions), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("terminate"), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
}

/// A command prefix that runs smrbench with at most `processes` processes
/// and threads for its user (RLIMIT_NPROC, through prlimit). Root is not held
/// to that limit, so as root smrbench runs as a user of its own (setpriv, a
/// uid no one else has: ctest runs these tests side by side, and the limit
/// counts every process of the user); "" when that cannot be arranged.
std::string with_process_limit(int processes) {
    const std::string limit = "prlimit --nproc=" + std::to_string(processes) + " -- ";
    if (std::system((limit + "true >/dev/null 2>&1").c_str()) != 0) return "";
    if (::geteuid() != 0) return limit;
    const std::string setpriv = as_user(60000 + static_cast<unsigned>(::getpid()) % 5000);
    return setpriv.empty() ? "" : limit + setpriv;
}

const char* const run = " --key-range 256 --duration 0.05 --quiet --json";

TEST(Limits, MoreThreadsThanTheProcessLimitAreRefusedBeforeTheRun) {
    const std::string prefix = with_process_limit(8);
    if (prefix.empty()) GTEST_SKIP() << "no prlimit, or root and no setpriv to run as nobody";
    for (const char* args : {"--threads 8", "--threads 6 --stall", "threadtest --threads 8"}) {
        const run_result r = run_binary(prefix + SMRBENCH_PATH, std::string(args) + " --quiet");
        EXPECT_EQ(r.exit_code, 2) << args << ": " << r.err;
        EXPECT_EQ(count_lines(r.err), 1) << r.err;
        EXPECT_NE(r.err.find("ulimit -u allows this user 8"), std::string::npos) << r.err;
    }
    // Within it, as a user whose only process smrbench is, the run starts.
    if (::geteuid() == 0) {
        EXPECT_EQ(run_binary(prefix + SMRBENCH_PATH, std::string("--threads 5") + run).exit_code,
                  0);
    }
}

// Within the limit, but the user's other processes (a shell and two sleeps)
// leave room for only some of the threads: the trial starts, and its thread
// group stops and joins the threads it started, which wait for `go` or,
// stalled, for the stop flag.
TEST(Limits, AThreadThatCannotBeCreatedEndsTheTrialWithOneLine) {
    if (::geteuid() != 0)
        GTEST_SKIP() << "needs a user with no other processes (root, to make one)";
    const std::string prefix = with_process_limit(7);
    if (prefix.empty()) GTEST_SKIP() << "no prlimit or setpriv";
    // The sleeps are reaped before the next case: zombies count too.
    auto beside_two_sleeps = [&](const std::string& args) {
        return run_binary(prefix + "sh -c", "'sleep 30 & a=$!; sleep 30 & b=$!; " +
                                                std::string(SMRBENCH_PATH) + " " + args +
                                                "; s=$?; kill $a $b; wait; exit $s'");
    };
    for (const char* args :
         {"--threads 4 --ds hm_list --reclaimer debra", "--threads 4 --ds hm_list --reclaimer hp",
          "--threads 4 --ds hm_list --reclaimer nbr", "--threads 3 --stall"}) {
        expect_failed_cleanly(beside_two_sleeps(args + std::string(run)), "cannot start thread");
    }
    expect_failed_cleanly(beside_two_sleeps("threadtest --threads 5 --ops 1000 --quiet --json"),
                          "cannot start thread");
}

TEST(Limits, StacksBeyondTheAddressSpaceLimitEndTheTrialWithOneLine) {
    // 64 threads of 8 MiB stacks need 512 MiB of address space.
    // glibc sizes thread stacks by ulimit -s (with it unlimited, 2 MiB).
    const run_result r =
        run_binary("ulimit -s 8192; ulimit -v 262144; exec " + std::string(SMRBENCH_PATH),
                   std::string("--threads 64") + run);
    expect_failed_cleanly(r, "cannot start thread");
}

TEST(Limits, MemoryThatRunsOutDuringThePrefillEndsTheTrialWithOneLine) {
    // 4 million nodes do not fit in 128 MiB of data segment (ulimit -d, which
    // malloc's heap and mappings count against, and which, unlike ulimit -v,
    // the check before the run does not read: the memory runs out in the
    // prefill); the prefill's own error is reported, not the sampler thread's
    // that could not start.
    const run_result r =
        run_binary("ulimit -d 131072; exec " + std::string(SMRBENCH_PATH),
                   "--threads 1 --key-range 8000000 --prefill 4000000 --duration 0.05 --quiet "
                   "--json");
    expect_failed_cleanly(r, "out of memory");
}

}  // namespace
