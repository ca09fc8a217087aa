// smrbench's output files (--timeline, --garbage-series) never harm a file:
// what cannot be written or must not be replaced is refused before the trial
// runs; a failed or interrupted write leaves the old file and no temporary
// file; a user's own FILE.tmp is never touched (bench/output_file.hpp).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "smrbench_process.hpp"

extern char** environ;

namespace {

using namespace smrbench_test;

const char* const quick = "--threads 2 --key-range 256 --duration 0.05 --quiet --json";

/// A fresh directory per test, removed after it.
class Outputs : public testing::Test {
  protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("smrbench-outputs-" + std::to_string(::getpid()) + "-" +
                testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override {
        std::error_code ec;
        fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::add, ec);
        fs::remove_all(dir_, ec);
    }

    fs::path path(const std::string& name) const { return dir_ / name; }

    static void write(const fs::path& file, const std::string& text) {
        std::ofstream(file) << text;
    }

    /// The names in the directory that are not `expected`: temporary files
    /// left behind, or outputs written where none should be.
    std::vector<std::string> unexpected_files(const std::vector<std::string>& expected) const {
        std::vector<std::string> extra;
        for (const auto& entry : fs::directory_iterator(dir_)) {
            const std::string name = entry.path().filename().string();
            if (std::find(expected.begin(), expected.end(), name) == expected.end()) {
                extra.push_back(name);
            }
        }
        return extra;
    }

    /// Refused before the trial: exit 2, one line naming `mentions`; run as
    /// `binary` (smrbench, or smrbench as another user).
    static void expect_refused(const std::string& args, const std::string& mentions,
                               const std::string& binary = SMRBENCH_PATH) {
        const run_result r = run_binary(binary, std::string(quick) + " " + args);
        EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
        EXPECT_EQ(count_lines(r.err), 1) << r.err;
        EXPECT_NE(r.err.find(mentions), std::string::npos) << r.err;
        EXPECT_EQ(r.out, "") << "a trial ran: " << args;
    }

    fs::path dir_;
};

/// smrbench as a user without privileges, for the cases root would pass
/// (root may write any file): as root, run through setpriv as nobody; ""
/// if that cannot be done.
std::string unprivileged_smrbench() {
    if (::geteuid() != 0) return SMRBENCH_PATH;
    const std::string nobody = as_user(65534);
    return nobody.empty() ? "" : nobody + SMRBENCH_PATH;
}

std::string timeline_header(const fs::path& file) {
    std::ifstream in(file);
    std::string header;
    std::getline(in, header);
    return header;
}

// ---- refused before the trial ------------------------------------------------

TEST_F(Outputs, ADirectoryIsRefusedBeforeTheTrial) {
    fs::create_directory(path("run.timeline"));
    expect_refused("--timeline " + path("run.timeline").string(), "is a directory");
    expect_refused("--garbage-series " + path("run.timeline").string(), "is a directory");
    EXPECT_TRUE(fs::is_directory(path("run.timeline")));
    EXPECT_TRUE(fs::is_empty(path("run.timeline")));
}

TEST_F(Outputs, EveryTrialsFileIsCheckedBeforeTheFirstTrial) {
    fs::create_directory(path("run.t2.timeline"));
    expect_refused("--trials 3 --timeline " + path("run.timeline").string(), "run.t2.timeline");
    EXPECT_EQ(unexpected_files({"run.t2.timeline"}), std::vector<std::string>{});
}

TEST_F(Outputs, AFifoIsNeitherOpenedNorReplaced) {
    ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
    // Opening a FIFO for writing would block with no reader: a refusal that
    // opens it hangs (the ctest timeout fails it).
    expect_refused("--timeline " + path("fifo").string(), "not a regular file");
    EXPECT_TRUE(fs::is_fifo(fs::symlink_status(path("fifo"))));
}

TEST_F(Outputs, ASymbolicLinkIsNotReplaced) {
    write(path("target"), "the user's data\n");
    fs::create_symlink(path("target"), path("link"));
    expect_refused("--timeline " + path("link").string(), "symbolic link");
    EXPECT_TRUE(fs::is_symlink(path("link")));
    EXPECT_EQ(slurp(path("target")), "the user's data\n");
    fs::create_symlink(path("nowhere"), path("dangling"));
    expect_refused("--garbage-series " + path("dangling").string(), "symbolic link");
    EXPECT_FALSE(fs::exists(path("nowhere")));
}

TEST_F(Outputs, ADeviceIsNotReplacedEvenByRoot) {
    // The case: as root, --timeline /dev/full replaced the device. A
    // device node of its own (/dev/full's numbers) shows it without risking
    // the machine's.
    if (::geteuid() != 0) GTEST_SKIP() << "only root may make a device node";
    const fs::path device = path("full");
    if (::mknod(device.c_str(), S_IFCHR | 0666, makedev(1, 7)) != 0) {
        GTEST_SKIP() << "cannot make a device node here: " << std::strerror(errno);
    }
    expect_refused("--timeline " + device.string(), "not a regular file");
    struct stat st {};
    ASSERT_EQ(::lstat(device.c_str(), &st), 0);
    EXPECT_TRUE(S_ISCHR(st.st_mode));
    EXPECT_EQ(unexpected_files({"full"}), std::vector<std::string>{});
}

TEST_F(Outputs, ADeviceIsNotReplaced) {
    // Unprivileged: were the check wrong, root's smrbench would replace
    // /dev/null for the whole machine (/dev/full was, before it).
    const std::string binary = unprivileged_smrbench();
    if (binary.empty()) GTEST_SKIP() << "root, and no setpriv to run as nobody";
    expect_refused("--timeline /dev/null", "not a regular file", binary);
    struct stat st {};
    ASSERT_EQ(::stat("/dev/null", &st), 0);
    EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST_F(Outputs, AReadOnlyFileOrDirectoryIsRefused) {
    const std::string binary = unprivileged_smrbench();
    if (binary.empty()) GTEST_SKIP() << "root, and no setpriv to run as nobody";
    fs::permissions(dir_, fs::perms::all, fs::perm_options::replace);  // nobody may write here
    write(path("kept"), "old\n");
    fs::permissions(path("kept"), fs::perms::owner_read | fs::perms::others_read,
                    fs::perm_options::replace);
    expect_refused("--timeline " + path("kept").string(), "read-only", binary);
    EXPECT_EQ(slurp(path("kept")), "old\n");
    fs::create_directory(path("locked"));
    fs::permissions(path("locked"),
                    fs::perms::owner_read | fs::perms::owner_exec | fs::perms::others_read |
                        fs::perms::others_exec,
                    fs::perm_options::replace);
    expect_refused("--timeline " + (path("locked") / "run.timeline").string(), "Permission denied",
                   binary);
    EXPECT_TRUE(fs::is_empty(path("locked")));
}

TEST_F(Outputs, AMissingDirectoryOrAFileAsDirectoryIsRefused) {
    expect_refused("--timeline " + (path("missing") / "run.timeline").string(), "does not exist");
    write(path("plain"), "x\n");
    expect_refused("--timeline " + (path("plain") / "run.timeline").string(), "Not a directory");
}

TEST_F(Outputs, TimelineAndGarbageSeriesMustBeTwoFiles) {
    expect_refused(
        "--timeline " + path("same").string() + " --garbage-series " + dir_.string() + "/./same",
        "one file");
    EXPECT_FALSE(fs::exists(path("same")));
}

// ---- written whole, and only what was asked ------------------------------------

TEST_F(Outputs, AnOldFileIsReplacedWholeAndTheUsersTmpFileIsUntouched) {
    write(path("run.timeline"), std::string(1 << 20, 'x'));  // longer than the new file
    write(path("run.timeline.tmp"), "the user's own file\n");
    const run_result r =
        smrbench(std::string(quick) + " --timeline " + path("run.timeline").string());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string text = slurp(path("run.timeline"));
    EXPECT_EQ(text.find('x'), std::string::npos) << "the old file's bytes remain";
    EXPECT_EQ(nlohmann::json::parse(timeline_header(path("run.timeline")))["format"],
              "smrlab-timeline");
    EXPECT_EQ(text.back(), '\n');
    EXPECT_EQ(slurp(path("run.timeline.tmp")), "the user's own file\n");
    EXPECT_EQ(unexpected_files({"run.timeline", "run.timeline.tmp"}), std::vector<std::string>{});
    struct stat st {};
    ASSERT_EQ(::stat(path("run.timeline").c_str(), &st), 0);
    const mode_t mask = ::umask(0);
    ::umask(mask);
    EXPECT_EQ(st.st_mode & 0777, 0666 & ~mask) << "the file's mode is not the umask's";
}

TEST_F(Outputs, AReplacedFileKeepsItsPermissions) {
    write(path("private.timeline"), "old\n");
    fs::permissions(path("private.timeline"), fs::perms::owner_read | fs::perms::owner_write,
                    fs::perm_options::replace);
    const run_result r =
        smrbench(std::string(quick) + " --timeline " + path("private.timeline").string());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(slurp(path("private.timeline")), "old\n");
    EXPECT_EQ(fs::status(path("private.timeline")).permissions(),
              fs::perms::owner_read | fs::perms::owner_write);
}

TEST_F(Outputs, AFullDiskLeavesTheOldFileAndNoTemporaryFile) {
    // RLIMIT_FSIZE stands in for a full disk: a write past 32 KiB fails (dash
    // counts ulimit -f in 512-byte blocks) with EFBIG; smrbench ignores
    // SIGXFSZ so that it fails rather than dies.
    write(path("run.timeline"), "old\n");
    const run_result r = run_binary("ulimit -f 64; exec " + std::string(SMRBENCH_PATH),
                                    "--threads 4 --key-range 256 --duration 0.05 --quiet --json "
                                    "--timeline-min-ns 0 --timeline " +
                                        path("run.timeline").string());
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("File too large"), std::string::npos) << r.err;
    EXPECT_EQ(slurp(path("run.timeline")), "old\n");
    EXPECT_EQ(unexpected_files({"run.timeline"}), std::vector<std::string>{});
}

// ---- standard output ---------------------------------------------------------------
// An output like any other: results that cannot all be written there (a full
// disk, /dev/full, a closed pipe) fail the run with one line, never exit 0.

/// Runs `binary args` with its standard output redirected to `target`
/// (a shell redirection's target), capturing stderr.
run_result run_with_stdout(const std::string& binary, const std::string& args,
                           const std::string& target) {
    const fs::path err = fs::temp_directory_path() / ("smrbench-err-" + std::to_string(::getpid()));
    const std::string command =
        binary + " " + args + " >" + target + " 2>" + err.string() + " </dev/null";
    const int status = std::system(command.c_str());
    run_result r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.err = slurp(err);
    fs::remove(err);
    return r;
}

/// Runs smrbench with `args`, its standard output a pipe whose reader has
/// already closed it: what `| head -c 0` leads to, without the race of a
/// reader that may not have exited yet.
run_result run_into_closed_pipe(const std::string& args) {
    int fds[2];
    if (::pipe(fds) != 0) return {};
    ::close(fds[0]);
    const fs::path err = fs::temp_directory_path() / ("smrbench-err-" + std::to_string(::getpid()));
    const std::string command = std::string(SMRBENCH_PATH) + " " + args + " 2>" + err.string();
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    const char* argv[] = {"sh", "-c", command.c_str(), nullptr};
    pid_t pid = -1;
    const int error =
        posix_spawn(&pid, "/bin/sh", &actions, nullptr, const_cast<char* const*>(argv), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    run_result r;
    int status = 0;
    if (error != 0 || ::waitpid(pid, &status, 0) != pid) return r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.err = slurp(err);
    fs::remove(err);
    return r;
}

void expect_output_failure(const run_result& r, const std::string& args, const char* reason) {
    EXPECT_EQ(r.exit_code, 1) << args << "\n" << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << args << "\n" << r.err;
    EXPECT_NE(r.err.find("cannot write to standard output"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(reason), std::string::npos) << r.err;
}

// Every kind of output smrbench prints: a trial's JSON and table, threadtest
// and layout, the listing, the help.
const char* const every_stdout_output[] = {
    "--threads 2 --key-range 256 --ops 200 --quiet --json",
    "--threads 2 --key-range 256 --ops 200 --quiet",
    "threadtest --ops 200 --quiet --json",
    "layout --blocks 64 --quiet --json",
    "--list --json",
    "--list",
    "--help",
};

TEST(StandardOutput, AFullDeviceFailsTheRun) {
    for (const char* args : every_stdout_output) {
        expect_output_failure(run_with_stdout(SMRBENCH_PATH, args, "/dev/full"), args,
                              "No space left on device");
    }
}

TEST(StandardOutput, AClosedPipeFailsTheRun) {
    for (const char* args : every_stdout_output) {
        expect_output_failure(run_into_closed_pipe(args), args, "Broken pipe");
    }
}

TEST_F(Outputs, AResultCutShortByAFullDiskFailsTheRun) {
    // RLIMIT_FSIZE stands in for a full disk: the JSON result is longer than
    // the 1 KiB a file may grow to here (ulimit -f counts 512-byte blocks).
    const std::string args = "--threads 2 --key-range 256 --ops 200 --quiet --json";
    const run_result r = run_with_stdout("ulimit -f 2; exec " + std::string(SMRBENCH_PATH), args,
                                         path("result.json").string());
    expect_output_failure(r, args, "File too large");
    EXPECT_EQ(fs::file_size(path("result.json")), 1024u);
}

// ---- interrupted while writing ---------------------------------------------------

/// Starts smrbench with `args` (stdout and stderr to /dev/null).
pid_t spawn_smrbench(const std::vector<std::string>& args) {
    std::vector<char*> argv{const_cast<char*>(SMRBENCH_PATH)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid = -1;
    const int error = posix_spawn(&pid, SMRBENCH_PATH, &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    return error == 0 ? pid : -1;
}

/// A temporary output in `dir`; with `written`, only one that holds data
/// (the check before the trial creates and removes an empty one).
bool has_temporary(const fs::path& dir, bool written = false) {
    for (const auto& entry : fs::directory_iterator(dir)) {
        if (entry.path().filename().string().find(".smrbench-") == std::string::npos) continue;
        std::error_code ec;
        if (!written || fs::file_size(entry.path(), ec) > 0) return true;
    }
    return false;
}

class Interrupted : public Outputs, public testing::WithParamInterface<int> {};

// The signal is sent while the temporary file exists: smrbench is stopped
// (SIGSTOP) as soon as one appears, and the attempt counts only if the file
// is still there once it is stopped (the write may have just finished).
TEST_P(Interrupted, WhileWritingLeavesTheOldFileAndNoTemporaryFile) {
    const int signal = GetParam();
    write(path("run.timeline"), "old\n");
    int caught = 0;
    for (int attempt = 0; attempt < 10 && caught == 0; ++attempt) {
        const pid_t pid =
            spawn_smrbench({"--threads", "4", "--key-range", "256", "--duration", "0.2", "--quiet",
                            "--timeline-min-ns", "0", "--timeline-capacity", "1000000",
                            "--timeline", path("run.timeline").string()});
        ASSERT_GT(pid, 0);
        int status = 0;
        bool exited = false;
        while (!has_temporary(dir_, true)) {
            if (::waitpid(pid, &status, WNOHANG) == pid) {
                exited = true;
                break;
            }
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
        if (!exited) {
            ::kill(pid, SIGSTOP);
            ASSERT_EQ(::waitpid(pid, &status, WUNTRACED), pid);
            exited = !WIFSTOPPED(status);  // it ended before the stop
        }
        if (!exited) {
            if (has_temporary(dir_, true)) {
                ++caught;
                ::kill(pid, signal);
            }
            ::kill(pid, SIGCONT);
            ASSERT_EQ(::waitpid(pid, &status, 0), pid);
            if (caught) {
                EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == signal) << status;
                EXPECT_EQ(slurp(path("run.timeline")), "old\n");
            }
        }
        EXPECT_FALSE(has_temporary(dir_)) << "a temporary file was left behind";
        if (!caught) write(path("run.timeline"), "old\n");
    }
    EXPECT_EQ(caught, 1) << "the write always finished before smrbench could be stopped";
    EXPECT_EQ(unexpected_files({"run.timeline"}), std::vector<std::string>{});
}

INSTANTIATE_TEST_SUITE_P(Signals, Interrupted, testing::Values(SIGINT, SIGTERM, SIGHUP),
                         [](const testing::TestParamInfo<int>& info) {
                             return std::string(sigabbrev_np(info.param));
                         });

}  // namespace
