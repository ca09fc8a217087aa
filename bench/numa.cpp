#include "numa.hpp"

#include <array>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "smr/core/mutant.hpp"

#if defined(SMRBENCH_HAVE_NUMA)
#include <numa.h>
#include <numaif.h>
#endif

namespace smrbench {
namespace {

constexpr std::array<std::pair<numa_policy, std::string_view>, 3> policies{{
    {numa_policy::none, "none"},
    {numa_policy::local, "local"},
    {numa_policy::interleave, "interleave"},
}};

#if defined(SMRBENCH_HAVE_NUMA)
// set_mempolicy for this thread; 0 or the errno it failed with.
int set_policy(numa_policy policy) {
    if (SMR_MUTANT("numa_policy_never_set")) return 0;
    if (policy == numa_policy::local) {
        return set_mempolicy(MPOL_LOCAL, nullptr, 0) == 0 ? 0 : errno;
    }
    // Every node this process may allocate on (its cpuset's), as numactl --interleave=all.
    bitmask* nodes = numa_get_mems_allowed();
    const int failed =
        set_mempolicy(MPOL_INTERLEAVE, nodes->maskp, nodes->size + 1) == 0 ? 0 : errno;
    numa_bitmask_free(nodes);
    return failed;
}
#endif

}  // namespace

std::optional<numa_policy> parse_numa_policy(std::string_view name) {
    for (const auto& [policy, policy_name] : policies) {
        if (policy_name == name) return policy;
    }
    return std::nullopt;
}

std::string_view to_string(numa_policy policy) {
    return policies[static_cast<std::size_t>(policy)].second;
}

numa_outcome apply_numa_policy(numa_policy policy) {
    numa_outcome outcome;
    outcome.policy = policy;
#if defined(SMRBENCH_HAVE_NUMA)
    const bool usable = numa_available() >= 0;
    outcome.nodes = usable ? numa_num_configured_nodes() : 1;
    if (policy == numa_policy::none) return outcome;
    const int failed = usable ? set_policy(policy) : ENOSYS;
    if (failed == 0) {
        if (outcome.nodes <= 1) outcome.note = "one NUMA node: the policy changes nothing";
        return outcome;
    }
    const std::string why = usable ? std::string("set_mempolicy: ") + std::strerror(failed)
                                   : std::string("the kernel offers no NUMA policies here");
    if (outcome.nodes > 1) {
        throw std::runtime_error("--numa " + std::string(to_string(policy)) + ": " + why +
                                 " (a container without CAP_SYS_NICE refuses memory policies)");
    }
    outcome.applied = false;
    outcome.note = why + "; one NUMA node, so nothing would change";
#else
    if (policy != numa_policy::none) {
        throw std::runtime_error("--numa " + std::string(to_string(policy)) +
                                 ": this smrbench was built without libnuma (Debian: "
                                 "libnuma-dev; scripts/bootstrap installs it)");
    }
#endif
    return outcome;
}

nlohmann::json numa_json(const numa_outcome& outcome) {
    return {
        {"policy", std::string(to_string(outcome.policy))},
        {"nodes", outcome.nodes},
        {"applied", outcome.applied},
        {"note", outcome.note.empty() ? nlohmann::json(nullptr) : nlohmann::json(outcome.note)}};
}

}  // namespace smrbench
