// Allocator selection and thread pinning (bench/allocator.hpp, bench/pinning.hpp).
//
// The PreloadedAllocator tests run this binary again as a child with an allocator preloaded and a
// gtest filter selecting one AllocatorChild test, which is skipped unless the parent set the
// environment it checks.
#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "allocator.hpp"
#include "pinning.hpp"

// Test names and failure messages show "jemalloc" rather than the enum's bytes.
namespace smrbench {
void PrintTo(allocator_kind kind, std::ostream* out) { *out << to_string(kind); }
}  // namespace smrbench

namespace {

namespace fs = std::filesystem;
using smrbench::allocator_kind;
using smrbench::pin_policy;

constexpr const char* expect_alloc_env = "SMR_EXPECT_ALLOC";  // child: preloaded by the parent
constexpr const char* reexec_alloc_env = "SMR_REEXEC_ALLOC";  // child: re-executes itself

const std::vector<allocator_kind> debian_allocators{
    allocator_kind::jemalloc, allocator_kind::tcmalloc, allocator_kind::mimalloc,
    allocator_kind::tbbmalloc};

// Sets an environment variable for one scope, restoring the previous state afterwards.
class scoped_env {
  public:
    scoped_env(const char* name, const std::string& value) : name_(name) {
        if (const char* old = std::getenv(name)) previous_ = old;
        setenv(name, value.c_str(), 1);
    }
    ~scoped_env() {
        if (previous_) {
            setenv(name_, previous_->c_str(), 1);
        } else {
            unsetenv(name_);
        }
    }
    scoped_env(const scoped_env&) = delete;
    scoped_env& operator=(const scoped_env&) = delete;

  private:
    const char* name_;
    std::optional<std::string> previous_;
};

std::string shell_quote(const std::string& word) {
    std::string quoted = "'";
    for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return quoted + "'";
}

struct child_result {
    int status;
    std::string output;
};

// Runs this test binary through /bin/sh with `environment` ("NAME=value ..." assignments, already
// quoted) and only the test `test_name`.
child_result run_self(const std::string& environment, const std::string& test_name) {
    const std::string command = environment + " " +
                                shell_quote(fs::read_symlink("/proc/self/exe").string()) +
                                " --gtest_filter=" + test_name + " 2>&1";
    child_result result{-1, {}};
    FILE* pipe = popen(command.c_str(), "r");
    if (pipe == nullptr) return result;
    char buffer[4096];
    while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) result.output += buffer;
    result.status = pclose(pipe);
    return result;
}

// gtest exits 0 when a filter matches nothing, so success also needs the test's own OK line.
void expect_child_passed(const child_result& child, const std::string& test_name) {
    EXPECT_EQ(child.status, 0) << child.output;
    EXPECT_NE(child.output.find("[       OK ] " + test_name), std::string::npos) << child.output;
}

void expect_permutation_of_allowed_cpus(pin_policy policy) {
    std::vector<int> order = smrbench::cpu_order(policy);
    std::vector<int> allowed = smrbench::allowed_cpus();
    std::sort(order.begin(), order.end());
    EXPECT_EQ(order, allowed) << "policy " << smrbench::to_string(policy);
}

// Two sockets, two cores each, two hardware threads per core, numbered the way Linux usually
// numbers them: first threads of all cores (0-3), then their siblings (4-7).
std::vector<smrbench::cpu_location> two_socket_topology() {
    return {{0, 0, 0}, {1, 0, 1}, {2, 1, 0}, {3, 1, 1}, {4, 0, 0}, {5, 0, 1}, {6, 1, 0}, {7, 1, 1}};
}

TEST(AllocatorNames, EveryNameRoundTrips) {
    const std::vector<std::string_view> names = smrbench::allocator_names();
    EXPECT_EQ(names.size(), 5u);
    for (std::string_view name : names) {
        const auto kind = smrbench::parse_allocator(name);
        ASSERT_TRUE(kind.has_value()) << name;
        EXPECT_EQ(smrbench::to_string(*kind), name);
    }
}

TEST(AllocatorNames, RejectsUnknownNames) {
    for (std::string_view bad : {"", "JEMALLOC", "tcmalloc_minimal", "glibc "}) {
        EXPECT_FALSE(smrbench::parse_allocator(bad).has_value()) << "'" << bad << "'";
    }
}

TEST(AllocatorLibrary, FindsEveryDebianAllocator) {
    for (allocator_kind kind : debian_allocators) {
        const auto library = smrbench::find_allocator_library(kind);
        ASSERT_TRUE(library.has_value()) << smrbench::to_string(kind) << " is not installed";
        EXPECT_TRUE(fs::exists(*library)) << *library;
    }
}

TEST(AllocatorLibrary, GlibcNeedsNoLibrary) {
    EXPECT_FALSE(smrbench::find_allocator_library(allocator_kind::glibc).has_value());
}

TEST(AllocatorLibrary, SearchesSmrbenchAllocDirFirst) {
    const fs::path dir = fs::temp_directory_path() / ("smr_alloc_dir_" + std::to_string(getpid()));
    fs::create_directories(dir);
    std::ofstream(dir / "libjemalloc.so.2") << "not really a library";
    {
        const scoped_env env("SMRBENCH_ALLOC_DIR", "/nonexistent:" + dir.string());
        EXPECT_EQ(smrbench::find_allocator_library(allocator_kind::jemalloc),
                  (dir / "libjemalloc.so.2").string());
    }
    fs::remove_all(dir);
}

TEST(IdentifyMalloc, TestProcessUsesTheDefaultAllocator) {
    const smrbench::allocator_identity identity = smrbench::identify_malloc();
    if (smrbench::allocator_selection_supported()) {
        EXPECT_EQ(identity.name, "glibc") << identity.library;
        EXPECT_NE(identity.library.find("libc.so"), std::string::npos) << identity.library;
    }
    EXPECT_FALSE(identity.version.empty());
    EXPECT_NO_THROW(smrbench::verify_allocator(allocator_kind::glibc, identity));
    EXPECT_THROW(smrbench::verify_allocator(allocator_kind::jemalloc, identity),
                 std::runtime_error);
}

class PreloadedAllocator : public ::testing::TestWithParam<allocator_kind> {
  protected:
    void SetUp() override {
        if (!smrbench::allocator_selection_supported()) {
            GTEST_SKIP() << "sanitizer builds cannot preload an allocator";
        }
    }
    std::string name() const { return std::string(smrbench::to_string(GetParam())); }
};

TEST_P(PreloadedAllocator, IsIdentifiedWhenPreloaded) {
    const auto library = smrbench::find_allocator_library(GetParam());
    ASSERT_TRUE(library.has_value()) << name() << " is not installed";
    const std::string test = "AllocatorChild.ReportsExpectedAllocator";
    const std::string env =
        "LD_PRELOAD=" + shell_quote(*library) + " " + expect_alloc_env + "=" + name();
    expect_child_passed(run_self(env, test), test);
}

TEST_P(PreloadedAllocator, IsInUseAfterReexec) {
    const std::string test = "AllocatorChild.ReexecsIntoRequestedAllocator";
    expect_child_passed(run_self(std::string(reexec_alloc_env) + "=" + name(), test), test);
}

INSTANTIATE_TEST_SUITE_P(Debian, PreloadedAllocator, ::testing::ValuesIn(debian_allocators));

TEST(AllocatorChild, ReportsExpectedAllocator) {
    const char* expected = std::getenv(expect_alloc_env);
    if (expected == nullptr) GTEST_SKIP() << "runs only as a child of PreloadedAllocator";
    const smrbench::allocator_identity identity = smrbench::identify_malloc();
    EXPECT_EQ(identity.name, expected) << identity.library;
    EXPECT_FALSE(identity.version.empty()) << identity.library;
    std::printf("malloc: %s %s (%s)\n", identity.name.c_str(), identity.version.c_str(),
                identity.library.c_str());
}

// What smrbench does in main(): the first process execs itself with the library preloaded, the
// re-executed one returns from the call and verifies.
TEST(AllocatorChild, ReexecsIntoRequestedAllocator) {
    const char* requested = std::getenv(reexec_alloc_env);
    if (requested == nullptr) GTEST_SKIP() << "runs only as a child of PreloadedAllocator";
    const auto kind = smrbench::parse_allocator(requested);
    ASSERT_TRUE(kind.has_value()) << requested;

    // gtest's main() keeps argv to itself; the kernel has a copy, NUL-terminated words.
    std::ifstream cmdline("/proc/self/cmdline");
    std::vector<std::string> words;
    for (std::string word; std::getline(cmdline, word, '\0');) words.push_back(word);
    std::vector<char*> argv;
    for (std::string& word : words) argv.push_back(word.data());
    argv.push_back(nullptr);

    smrbench::reexec_with_allocator_if_needed(*kind, static_cast<int>(words.size()), argv.data());
    EXPECT_NO_THROW(smrbench::verify_allocator(*kind, smrbench::identify_malloc()));
}

TEST(PinPolicy, EveryNameRoundTrips) {
    for (std::string_view name : smrbench::pin_policy_names()) {
        const auto policy = smrbench::parse_pin_policy(name);
        ASSERT_TRUE(policy.has_value()) << name;
        EXPECT_EQ(smrbench::to_string(*policy), name);
    }
    EXPECT_FALSE(smrbench::parse_pin_policy("spread").has_value());
}

TEST(CpuOrder, IsAPermutationOfTheAllowedCpus) {
    ASSERT_FALSE(smrbench::allowed_cpus().empty());
    expect_permutation_of_allowed_cpus(pin_policy::none);
    expect_permutation_of_allowed_cpus(pin_policy::compact);
    expect_permutation_of_allowed_cpus(pin_policy::scatter);
}

TEST(CpuOrder, CompactFillsCoresThenSiblingsThenTheNextSocket) {
    EXPECT_EQ(smrbench::order_cpus(pin_policy::compact, two_socket_topology()),
              (std::vector<int>{0, 1, 4, 5, 2, 3, 6, 7}));
}

TEST(CpuOrder, ScatterAlternatesSocketsAndCoresBeforeSiblings) {
    EXPECT_EQ(smrbench::order_cpus(pin_policy::scatter, two_socket_topology()),
              (std::vector<int>{0, 2, 1, 3, 4, 6, 5, 7}));
}

TEST(CpuOrder, WorkersWrapAroundWhenOversubscribed) {
    const std::vector<int> order{3, 1};
    EXPECT_EQ(smrbench::cpu_for_worker(order, 0), 3);
    EXPECT_EQ(smrbench::cpu_for_worker(order, 1), 1);
    EXPECT_EQ(smrbench::cpu_for_worker(order, 2), 3);
}

TEST(PinCurrentThread, RunsTheThreadOnThatCpu) {
    const int cpu = smrbench::allowed_cpus().back();
    int ran_on = -1;
    bool pinned = false;
    std::thread worker([&] {
        pinned = smrbench::pin_current_thread(cpu);
        ran_on = sched_getcpu();
    });
    worker.join();
    EXPECT_TRUE(pinned);
    EXPECT_EQ(ran_on, cpu);
    EXPECT_FALSE(smrbench::pin_current_thread(-1));
}

}  // namespace
