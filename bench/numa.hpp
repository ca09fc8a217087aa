// Where a run's memory lives on a machine with several NUMA nodes: smrbench --numa.
//
//   none:       the memory policy smrbench was started with, untouched (numactl outside
//               smrbench still works: `numactl --interleave=all smrbench ...`).
//   local:      each page on the node of the CPU that first touches it (the kernel's default,
//               set explicitly, so a policy inherited from a shell is overridden).
//   interleave: pages spread round-robin over every node the process may use, as the Epochs
//               paper ran its benchmarks (numactl --interleave=all, Section 3): no thread's
//               nodes are all local, none all remote, and one node's memory bandwidth is not
//               the whole run's.
//
// The policy is set on the main thread before the structure is prefilled and before any worker
// starts; threads inherit it. A machine with one node has nothing to place: the policy is set
// all the same where the kernel allows, and reported as having no effect.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace smrbench {

enum class numa_policy { none, local, interleave };

std::optional<numa_policy> parse_numa_policy(std::string_view name);
std::string_view to_string(numa_policy policy);

// What --numa did: the policy, the machine's nodes, whether the kernel took it, and why not.
struct numa_outcome {
    numa_policy policy = numa_policy::none;
    int nodes = 1;
    bool applied = true;
    std::string note;  // empty when the policy took effect as asked
};

// Sets `policy` for this thread and the threads it starts. Throws std::runtime_error (one
// line) when a policy other than none cannot be set on a machine with several nodes, where
// running anyway would measure something else than asked.
numa_outcome apply_numa_policy(numa_policy policy);

// The JSON's "numa" object: {"policy", "nodes", "applied", "note"}.
nlohmann::json numa_json(const numa_outcome& outcome);

}  // namespace smrbench
