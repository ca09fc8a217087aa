// Thread placement for smrbench workers.
//
// cpu_order() lists the CPUs this process may run on in the order workers take them; worker i
// runs on cpu_for_worker(order, i), so more workers than CPUs wrap around (oversubscription).
//   compact: fill one socket first: one hardware thread on every physical core, then the
//            hyperthread siblings of that socket, then the next socket (the placement of the
//            Epochs paper).
//   scatter: round-robin across sockets, and across the cores of each socket before siblings.
//   none:    workers are not pinned; the order is ascending CPU number.
#pragma once

#include <cstddef>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <vector>

namespace smrbench {

enum class pin_policy { none, compact, scatter };

std::optional<pin_policy> parse_pin_policy(std::string_view name);
std::string_view to_string(pin_policy policy);
std::vector<std::string_view> pin_policy_names();

// Where a logical CPU sits. `core` is the core_id within its package (Linux numbers cores per
// package), so a physical core is identified by (package, core).
struct cpu_location {
    int cpu;
    int package;
    int core;
};

// The CPUs in this process's affinity mask (sched_getaffinity), ascending.
std::vector<int> allowed_cpus();

// Package and core of each CPU from /sys/devices/system/cpu/cpuN/topology under `root` (a
// recorded tree of another machine in tests). A CPU whose topology is unreadable counts as its
// own core on package 0.
std::vector<cpu_location> read_topology(const std::vector<int>& cpus,
                                        const std::filesystem::path& root = "/");

// The placement order for `policy` over the given CPUs; pure, so any topology can be tested.
std::vector<int> order_cpus(pin_policy policy, std::vector<cpu_location> cpus);

// order_cpus(policy, read_topology(allowed_cpus())): never empty.
std::vector<int> cpu_order(pin_policy policy);

// The CPU worker `worker` runs on; `order` must not be empty.
int cpu_for_worker(const std::vector<int>& order, std::size_t worker);

// Restricts the calling thread to `cpu`; false if the CPU does not exist or is not allowed.
bool pin_current_thread(int cpu);

// The JSON's "placement" object: the policy and the CPU each of `workers` workers runs on
// (worker_cpus, null when unpinned), so a reader sees where a run's threads were.
nlohmann::json placement_json(pin_policy policy, int workers);

}  // namespace smrbench
