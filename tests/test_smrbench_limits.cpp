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
/// to that limit, so as root smrbench runs as nobody (setpriv), whose only
/// process it is; "" when that cannot be arranged.
std::string with_process_limit(int processes) {
    const std::string limit = "prlimit --nproc=" + std::to_string(processes) + " -- ";
    if (std::system((limit + "true >/dev/null 2>&1").c_str()) != 0) return "";
    if (::geteuid() != 0) return limit;
    const std::string setpriv = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
    if (std::system((setpriv + "true >/dev/null 2>&1").c_str()) != 0) return "";
    return limit + setpriv;
}

const char* const run = " --key-range 256 --duration 0.05 --quiet --json";

TEST(Limits, AThreadThatCannotBeCreatedEndsTheTrialWithOneLine) {
    const std::string prefix = with_process_limit(4);  // smrbench and 3 of its threads
    if (prefix.empty()) GTEST_SKIP() << "no prlimit, or root and no setpriv to run as nobody";
    for (const char* reclaimer : {"debra", "hp", "nbr"}) {
        const run_result r =
            run_binary(prefix + SMRBENCH_PATH,
                       std::string("--threads 8 --ds hm_list --reclaimer ") + reclaimer + run);
        expect_failed_cleanly(r, "cannot start thread");
    }
    // A stalled thread waits for the stop flag, the others for `go`.
    expect_failed_cleanly(
        run_binary(prefix + SMRBENCH_PATH, std::string("--threads 3 --stall") + run),
        "cannot start thread");
}

TEST(Limits, ThreadtestsThreadThatCannotBeCreatedEndsWithOneLine) {
    const std::string prefix = with_process_limit(4);
    if (prefix.empty()) GTEST_SKIP() << "no prlimit, or root and no setpriv to run as nobody";
    expect_failed_cleanly(
        run_binary(prefix + SMRBENCH_PATH, "threadtest --threads 8 --ops 1000 --quiet --json"),
        "cannot start thread");
}

TEST(Limits, StacksBeyondTheAddressSpaceLimitEndTheTrialWithOneLine) {
    // 64 threads of 8 MiB stacks need 512 MiB of address space.
    const run_result r = run_binary("ulimit -v 262144; exec " + std::string(SMRBENCH_PATH),
                                    std::string("--threads 64") + run);
    expect_failed_cleanly(r, "cannot start thread");
}

TEST(Limits, MemoryThatRunsOutDuringThePrefillEndsTheTrialWithOneLine) {
    // 4 million nodes do not fit in 128 MiB of address space; the prefill's
    // own error is reported, not the sampler thread's that could not start.
    const run_result r =
        run_binary("ulimit -v 131072; exec " + std::string(SMRBENCH_PATH),
                   "--threads 1 --key-range 8000000 --prefill 4000000 --duration 0.05 --quiet "
                   "--json");
    expect_failed_cleanly(r, "out of memory");
}

}  // namespace
