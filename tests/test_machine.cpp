// smrbench's machine object (bench/machine.hpp), read from a tree of /proc and /sys files
// written here: a two-socket machine this test does not run on, and a root with nothing in it.

#include <gtest/gtest.h>
#include <unistd.h>
#if __has_include(<numaif.h>)
#include <numaif.h>
#endif

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "build_info.hpp"
#include "machine.hpp"
#include "numa.hpp"
#include "pinning.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class scratch_root {
  public:
    scratch_root() {
        std::string pattern = (fs::temp_directory_path() / "smr-machine-XXXXXX").string();
        if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
        path_ = pattern;
    }
    ~scratch_root() {
        std::error_code ignored;
        fs::remove_all(path_, ignored);
    }
    scratch_root(const scratch_root&) = delete;
    scratch_root& operator=(const scratch_root&) = delete;

    const fs::path& path() const { return path_; }

    void write(const std::string& relative, const std::string& text) const {
        const fs::path file = path_ / relative;
        fs::create_directories(file.parent_path());
        std::ofstream(file) << text << '\n';
    }

  private:
    fs::path path_;
};

// Two sockets of two cores with two hardware threads each, numbered as Linux numbers them: the
// first thread of every core (0-3), then the siblings (4-7); socket 1 holds CPUs 2, 3, 6, 7.
void write_two_socket_machine(const scratch_root& root) {
    const std::string cpu = "sys/devices/system/cpu/";
    root.write(cpu + "online", "0-7");
    for (int n = 0; n < 8; ++n) {
        const std::string dir = cpu + "cpu" + std::to_string(n) + "/topology/";
        root.write(dir + "physical_package_id", std::to_string((n / 2) % 2));
        root.write(dir + "core_id", std::to_string(n % 2));
    }
    const std::string cache = cpu + "cpu0/cache/";
    root.write(cache + "index0/level", "1");
    root.write(cache + "index0/type", "Data");
    root.write(cache + "index0/size", "48K");
    root.write(cache + "index0/shared_cpu_list", "0,4");
    root.write(cache + "index3/level", "3");
    root.write(cache + "index3/type", "Unified");
    root.write(cache + "index3/size", "32M");
    root.write(cache + "index3/shared_cpu_list", "0-1,4-5");
    root.write(cpu + "cpu0/cpufreq/scaling_governor", "performance");
    root.write("sys/devices/system/node/online", "0-1");
    root.write("proc/cpuinfo",
               "processor\t: 0\nmodel name\t: Example CPU 9000 @ 3.00GHz\n"
               "flags\t\t: fpu sse2 hypervisor avx2\n\nprocessor\t: 1\n"
               "model name\t: Example CPU 9000 @ 3.00GHz\n");
    root.write("proc/meminfo", "MemTotal:        1048576 kB\nMemFree:          524288 kB");
    root.write("proc/loadavg", "0.50 0.25 0.10 1/100 1234");
    root.write("proc/sys/kernel/osrelease", "6.1.0-18-amd64");
    root.write("proc/sys/kernel/hostname", "twosocket");
    root.write("sys/class/dmi/id/sys_vendor", "QEMU");
    root.write("sys/class/dmi/id/product_name", "Standard PC (Q35 + ICH9, 2009)");
}

TEST(Machine, TwoSocketTreeIsDescribedField_by_field) {
    const scratch_root root;
    write_two_socket_machine(root);
    const json machine = smrbench::machine_json(root.path());
    EXPECT_EQ(machine["cpu_model"], "Example CPU 9000 @ 3.00GHz");
    EXPECT_EQ(machine["sockets"], 2);
    EXPECT_EQ(machine["cores"], 4);
    EXPECT_EQ(machine["threads"], 8);
    EXPECT_EQ(machine["threads_per_core"], 2);
    EXPECT_EQ(machine["numa_nodes"], 2);
    ASSERT_EQ(machine["caches"].size(), 2u);
    EXPECT_EQ(machine["caches"][0],
              (json{{"level", 1}, {"type", "Data"}, {"size_bytes", 48 * 1024}, {"shared_by", 2}}));
    EXPECT_EQ(machine["caches"][1]["size_bytes"], 32LL * 1024 * 1024);
    EXPECT_EQ(machine["caches"][1]["shared_by"], 4);
    EXPECT_EQ(machine["memory_bytes"], 1024LL * 1024 * 1024);
    EXPECT_EQ(machine["kernel"], "6.1.0-18-amd64");
    EXPECT_EQ(machine["hostname"], "twosocket");
    EXPECT_EQ(machine["virtualization"], (json{{"hypervisor", true},
                                               {"system", "QEMU Standard PC (Q35 + ICH9, 2009)"},
                                               {"container", nullptr}}));
    EXPECT_EQ(machine["load_average"], json::array({0.5, 0.25, 0.1}));
    EXPECT_EQ(machine["governor"], "performance");
}

TEST(Machine, PinningOrdersTheRecordedTopology) {
    const scratch_root root;
    write_two_socket_machine(root);
    const auto topology = smrbench::read_topology({0, 1, 2, 3, 4, 5, 6, 7}, root.path());
    using smrbench::pin_policy;
    // compact: socket 0's cores, then their siblings, then socket 1.
    EXPECT_EQ(smrbench::order_cpus(pin_policy::compact, topology),
              (std::vector<int>{0, 1, 4, 5, 2, 3, 6, 7}));
    // scatter: alternate sockets, cores before siblings.
    EXPECT_EQ(smrbench::order_cpus(pin_policy::scatter, topology),
              (std::vector<int>{0, 2, 1, 3, 4, 6, 5, 7}));
}

// A real two-socket machine's files (tests/data/machines/xeon-silver-4108-2p/README.md).
const fs::path recorded = fs::path(SMR_TEST_MACHINES) / "xeon-silver-4108-2p";

TEST(Machine, RecordedTwoSocketXeonIsDescribed) {
    const json machine = smrbench::machine_json(recorded);
    EXPECT_EQ(machine["cpu_model"], "Intel(R) Xeon(R) Silver 4108 CPU @ 1.80GHz");
    EXPECT_EQ(machine["sockets"], 2);
    EXPECT_EQ(machine["cores"], 16);
    EXPECT_EQ(machine["threads"], 32);
    EXPECT_EQ(machine["threads_per_core"], 2);
    EXPECT_EQ(machine["numa_nodes"], 2);
    ASSERT_EQ(machine["caches"].size(), 4u);
    EXPECT_EQ(
        machine["caches"][3],
        (json{{"level", 3}, {"type", "Unified"}, {"size_bytes", 11264 * 1024}, {"shared_by", 16}}));
    EXPECT_EQ(machine["memory_bytes"], 97445600LL * 1024);
    EXPECT_EQ(machine["virtualization"]["hypervisor"], false);
}

TEST(Machine, RecordedTwoSocketXeonIsPinnedCoresFirst) {
    std::vector<int> cpus(32);
    for (int cpu = 0; cpu < 32; ++cpu) cpus[static_cast<std::size_t>(cpu)] = cpu;
    const auto topology = smrbench::read_topology(cpus, recorded);
    using smrbench::pin_policy;
    // compact: package 0's 8 cores (0-7), their siblings (16-23), then package 1 likewise.
    std::vector<int> compact;
    for (int first : {0, 16, 8, 24}) {
        for (int cpu = first; cpu < first + 8; ++cpu) compact.push_back(cpu);
    }
    EXPECT_EQ(smrbench::order_cpus(pin_policy::compact, topology), compact);
    // scatter: alternate packages, every core before any sibling.
    std::vector<int> scatter;
    for (int core = 0; core < 8; ++core) scatter.insert(scatter.end(), {core, core + 8});
    for (int core = 0; core < 8; ++core) scatter.insert(scatter.end(), {core + 16, core + 24});
    EXPECT_EQ(smrbench::order_cpus(pin_policy::scatter, topology), scatter);
}

TEST(Machine, WhatCannotBeReadIsNullNotGuessed) {
    const scratch_root root;
    const json machine = smrbench::machine_json(root.path());
    for (const char* field :
         {"cpu_model", "memory_bytes", "kernel", "hostname", "load_average", "governor"}) {
        EXPECT_TRUE(machine[field].is_null()) << field;
    }
    EXPECT_EQ(machine["threads"], 0);
    EXPECT_EQ(machine["numa_nodes"], 1);  // a kernel without NUMA has one node
    EXPECT_TRUE(machine["caches"].empty());
    EXPECT_TRUE(machine["virtualization"]["hypervisor"].is_null());
}

TEST(Machine, ThisMachineHasItsTopologyAndTheProcessCpus) {
    const json& machine = smrbench::this_machine_json();
    EXPECT_GE(machine["threads"].get<long>(), 1);
    EXPECT_GE(machine["cores"].get<long>(), 1);
    EXPECT_GE(machine["sockets"].get<long>(), 1);
    EXPECT_LE(machine["cpus"].get<long>(), machine["threads"].get<long>());
    EXPECT_EQ(&machine, &smrbench::this_machine_json());  // one snapshot per process
}

TEST(Machine, CpuListsAndCacheSizesParseOrRefuse) {
    using smrbench::parse_cache_size;
    using smrbench::parse_cpu_list;
    EXPECT_EQ(parse_cpu_list("0-3,8,10-11"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
    EXPECT_EQ(parse_cpu_list("5"), (std::vector<int>{5}));
    EXPECT_EQ(parse_cpu_list(""), (std::vector<int>{}));
    for (const char* bad : {"3-1", "a", "1-", "-1", "1,,2", "0-3x"}) {
        EXPECT_FALSE(parse_cpu_list(bad).has_value()) << bad;
    }
    EXPECT_EQ(parse_cache_size("32K"), 32 * 1024);
    EXPECT_EQ(parse_cache_size("2M"), 2 * 1024 * 1024);
    EXPECT_EQ(parse_cache_size("512"), 512);
    EXPECT_FALSE(parse_cache_size("").has_value());
    EXPECT_FALSE(parse_cache_size("K").has_value());
    EXPECT_FALSE(parse_cache_size("12Q").has_value());
}

TEST(Numa, PoliciesParseAndApplyOnThisMachine) {
    using smrbench::numa_policy;
    EXPECT_EQ(smrbench::parse_numa_policy("interleave"), numa_policy::interleave);
    EXPECT_FALSE(smrbench::parse_numa_policy("all").has_value());
    const smrbench::numa_outcome none = smrbench::apply_numa_policy(numa_policy::none);
    EXPECT_TRUE(none.applied);
    EXPECT_TRUE(none.note.empty());
    EXPECT_GE(none.nodes, 1);
    // Where several nodes refuse the policy this throws; one node never stops a run.
    if (none.nodes == 1) {
        const auto interleave = smrbench::apply_numa_policy(numa_policy::interleave);
        EXPECT_FALSE(interleave.note.empty());  // says it changed nothing, or why not set
        EXPECT_EQ(smrbench::numa_json(interleave)["policy"], "interleave");
#if __has_include(<numaif.h>)
        if (interleave.applied) {  // the kernel holds the policy asked for
            int mode = -1;
            ASSERT_EQ(get_mempolicy(&mode, nullptr, 0, nullptr, 0), 0);
            EXPECT_EQ(mode, MPOL_INTERLEAVE);
        }
#endif
        smrbench::apply_numa_policy(numa_policy::local);  // back to the default placement
    }
}

TEST(BuildInfo, NamesTheCompilerTypeAndSanitizer) {
    const json build = smrbench::build_json();
    EXPECT_FALSE(build["version"].get<std::string>().empty());
    EXPECT_FALSE(build["compiler"].get<std::string>().empty());
    if (!build["commit"].is_null()) {
        EXPECT_EQ(build["commit"].get<std::string>().size(), 40u);
    }
#if defined(__SANITIZE_ADDRESS__)
    EXPECT_EQ(build["sanitizer"], "address");
#elif defined(__SANITIZE_THREAD__)
    EXPECT_EQ(build["sanitizer"], "thread");
#endif
    EXPECT_EQ(smrbench::version_line().rfind("smrbench " + build["version"].get<std::string>(), 0),
              0u);
}

}  // namespace
