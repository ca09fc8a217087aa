// Runs the smrbench binary as a user does (a shell command line, both
// streams captured): shared by the tests of its commands.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace smrbench_test {

namespace fs = std::filesystem;

struct run_result {
    int exit_code = -1;
    std::string out;
    std::string err;
    double seconds = 0;  ///< wall time of the whole run
};

inline std::string slurp(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
}

/// Runs `binary` with `args` (a shell-quoted string), capturing both streams.
inline run_result run_binary(const std::string& binary, const std::string& args) {
    const fs::path dir = fs::temp_directory_path();
    const std::string tag = std::to_string(::getpid()) + "-" + std::to_string(std::rand());
    const fs::path out = dir / ("smrbench-out-" + tag), err = dir / ("smrbench-err-" + tag);
    const std::string command =
        binary + " " + args + " >" + out.string() + " 2>" + err.string() + " </dev/null";
    const auto start = std::chrono::steady_clock::now();
    const int status = std::system(command.c_str());
    run_result result;
    result.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    result.out = slurp(out);
    result.err = slurp(err);
    fs::remove(out);
    fs::remove(err);
    return result;
}

/// Runs smrbench with `args`.
inline run_result smrbench(const std::string& args) { return run_binary(SMRBENCH_PATH, args); }

#ifdef SMRBENCH_FAULTS_PATH
/// Runs the test build of smrbench (bench/faults.hpp) with `args`.
inline run_result smrbench_faults(const std::string& args) {
    return run_binary(SMRBENCH_FAULTS_PATH, args);
}
#endif

/// A command prefix that runs what follows as user `uid` (setpriv, from
/// root), for the cases root would pass (root may write any file and is not
/// held to ulimit -u); "" if setpriv cannot do it here.
inline std::string as_user(unsigned uid) {
    const std::string id = std::to_string(uid);
    const std::string setpriv = "setpriv --reuid=" + id + " --regid=" + id + " --clear-groups ";
    if (std::system((setpriv + "true >/dev/null 2>&1").c_str()) != 0) return "";
    return setpriv;
}

inline int count_lines(const std::string& text) {
    int lines = 0;
    for (char c : text) lines += c == '\n';
    return lines;
}

inline bool sanitizer_build() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    return true;
#else
    return false;
#endif
}

/// A command line smrbench must refuse, and a word its one error line names.
struct bad_input_case {
    const char* args;
    const char* stderr_mentions;
};

inline void PrintTo(const bad_input_case& c, std::ostream* out) { *out << '"' << c.args << '"'; }

/// Refused before anything runs: exit code 2, one line on stderr naming the
/// problem, nothing on stdout.
inline void expect_refused(const bad_input_case& c) {
    const run_result r = smrbench(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args;
    EXPECT_EQ(count_lines(r.err), 1) << "stderr: " << r.err;
    EXPECT_EQ(r.err.rfind("smrbench: error: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(c.stderr_mentions), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << "stdout: " << r.out;
}

/// A test name from the arguments: "--key-range 100 --prefill 101" ->
/// "key_range_100_prefill_101".
inline std::string bad_input_name(const testing::TestParamInfo<bad_input_case>& info) {
    std::string name;
    for (const char* c = info.param.args; *c != '\0'; ++c) {
        if (std::isalnum(static_cast<unsigned char>(*c))) {
            name += *c;
        } else if (!name.empty() && name.back() != '_') {
            name += '_';
        }
    }
    return name;
}

}  // namespace smrbench_test
