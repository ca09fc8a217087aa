#include "pinning.hpp"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <fstream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

namespace smrbench {
namespace {

constexpr std::array<std::pair<pin_policy, std::string_view>, 3> policies{{
    {pin_policy::none, "none"},
    {pin_policy::compact, "compact"},
    {pin_policy::scatter, "scatter"},
}};

constexpr bool table_is_indexed_by_policy() {
    for (std::size_t i = 0; i < policies.size(); ++i) {
        if (static_cast<std::size_t>(policies[i].first) != i) return false;
    }
    return true;
}
static_assert(table_is_indexed_by_policy(), "policies[] must be in pin_policy order");

// cpu_set_t is fixed at 1024 CPUs; dynamically sized sets keep larger machines working.
struct cpu_set_deleter {
    void operator()(cpu_set_t* set) const { CPU_FREE(set); }
};
using cpu_set_ptr = std::unique_ptr<cpu_set_t, cpu_set_deleter>;

cpu_set_ptr make_cpu_set(std::size_t cpu_count) {
    cpu_set_ptr set(CPU_ALLOC(cpu_count));
    if (set) CPU_ZERO_S(CPU_ALLOC_SIZE(cpu_count), set.get());
    return set;
}

std::vector<int> online_cpus_fallback() {
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    std::vector<int> cpus;
    for (int cpu = 0; cpu < std::max(online, 1L); ++cpu) cpus.push_back(cpu);
    return cpus;
}

std::optional<int> read_int(const std::filesystem::path& path) {
    std::ifstream file(path);
    int value = 0;
    if (file >> value) return value;
    return std::nullopt;
}

using package_map = std::map<int, std::vector<cpu_location>>;

package_map group_by_package(const std::vector<cpu_location>& cpus) {
    package_map packages;
    for (const cpu_location& location : cpus) packages[location.package].push_back(location);
    return packages;
}

// One package in compact order: the first hardware thread of every core (in core order), then
// the second thread of every core, and so on.
std::vector<int> cores_before_siblings(std::vector<cpu_location> package) {
    std::sort(package.begin(), package.end(), [](const cpu_location& a, const cpu_location& b) {
        return std::tie(a.core, a.cpu) < std::tie(b.core, b.cpu);
    });
    std::vector<std::pair<int, int>> by_sibling_rank;  // (rank within core, cpu)
    for (std::size_t i = 0; i < package.size(); ++i) {
        const bool same_core = i > 0 && package[i].core == package[i - 1].core;
        const int rank = same_core ? by_sibling_rank.back().first + 1 : 0;
        by_sibling_rank.emplace_back(rank, package[i].cpu);
    }
    std::stable_sort(by_sibling_rank.begin(), by_sibling_rank.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<int> order;
    for (const auto& [rank, cpu] : by_sibling_rank) order.push_back(cpu);
    return order;
}

std::vector<int> compact_order(const package_map& packages) {
    std::vector<int> order;
    for (const auto& [package, cpus] : packages) {
        const std::vector<int> within = cores_before_siblings(cpus);
        order.insert(order.end(), within.begin(), within.end());
    }
    return order;
}

std::vector<int> scatter_order(const package_map& packages) {
    std::vector<std::vector<int>> per_package;
    std::size_t longest = 0;
    for (const auto& [package, cpus] : packages) {
        per_package.push_back(cores_before_siblings(cpus));
        longest = std::max(longest, per_package.back().size());
    }
    std::vector<int> order;
    for (std::size_t round = 0; round < longest; ++round) {
        for (const std::vector<int>& package : per_package) {
            if (round < package.size()) order.push_back(package[round]);
        }
    }
    return order;
}

std::vector<int> ascending_order(const std::vector<cpu_location>& cpus) {
    std::vector<int> order;
    for (const cpu_location& location : cpus) order.push_back(location.cpu);
    std::sort(order.begin(), order.end());
    return order;
}

}  // namespace

std::optional<pin_policy> parse_pin_policy(std::string_view name) {
    for (const auto& [policy, policy_name] : policies) {
        if (policy_name == name) return policy;
    }
    return std::nullopt;
}

std::string_view to_string(pin_policy policy) {
    return policies[static_cast<std::size_t>(policy)].second;
}

std::vector<std::string_view> pin_policy_names() {
    std::vector<std::string_view> names;
    for (const auto& [policy, name] : policies) names.push_back(name);
    return names;
}

std::vector<int> allowed_cpus() {
    // The kernel rejects (EINVAL) a mask smaller than its own; grow until it fits.
    for (std::size_t capacity = 1024; capacity <= (std::size_t{1} << 20); capacity *= 2) {
        const cpu_set_ptr set = make_cpu_set(capacity);
        if (!set) break;
        const std::size_t size = CPU_ALLOC_SIZE(capacity);
        if (sched_getaffinity(0, size, set.get()) == 0) {
            std::vector<int> cpus;
            for (std::size_t cpu = 0; cpu < capacity; ++cpu) {
                if (CPU_ISSET_S(cpu, size, set.get())) cpus.push_back(static_cast<int>(cpu));
            }
            return cpus;
        }
        if (errno != EINVAL) break;
    }
    return online_cpus_fallback();
}

std::vector<cpu_location> read_topology(const std::vector<int>& cpus,
                                        const std::filesystem::path& root) {
    std::vector<cpu_location> locations;
    for (int cpu : cpus) {
        const std::filesystem::path dir =
            root / "sys/devices/system/cpu" / ("cpu" + std::to_string(cpu)) / "topology";
        const std::optional<int> package = read_int(dir / "physical_package_id");
        const std::optional<int> core = read_int(dir / "core_id");
        // Some kernels report -1 for an unknown package; treat it like a missing file.
        const bool known = package.value_or(-1) >= 0 && core.has_value();
        locations.push_back(known ? cpu_location{cpu, *package, *core} : cpu_location{cpu, 0, cpu});
    }
    return locations;
}

std::vector<int> order_cpus(pin_policy policy, std::vector<cpu_location> cpus) {
    switch (policy) {
        case pin_policy::compact:
            return compact_order(group_by_package(cpus));
        case pin_policy::scatter:
            return scatter_order(group_by_package(cpus));
        case pin_policy::none:
            break;
    }
    return ascending_order(cpus);
}

std::vector<int> cpu_order(pin_policy policy) {
    return order_cpus(policy, read_topology(allowed_cpus()));
}

int cpu_for_worker(const std::vector<int>& order, std::size_t worker) {
    if (order.empty()) throw std::invalid_argument("cpu_for_worker: the CPU order is empty");
    return order[worker % order.size()];
}

nlohmann::json placement_json(pin_policy policy, int workers) {
    nlohmann::json placement = {{"pin", std::string(to_string(policy))}, {"worker_cpus", nullptr}};
    if (policy == pin_policy::none) return placement;
    const std::vector<int> order = cpu_order(policy);
    std::vector<int> cpus;
    for (int worker = 0; worker < workers; ++worker) {
        cpus.push_back(cpu_for_worker(order, static_cast<std::size_t>(worker)));
    }
    placement["worker_cpus"] = cpus;
    return placement;
}

bool pin_current_thread(int cpu) {
    if (cpu < 0) return false;
    const std::size_t capacity = static_cast<std::size_t>(cpu) + 1;
    const cpu_set_ptr set = make_cpu_set(capacity);
    if (!set) return false;
    const std::size_t size = CPU_ALLOC_SIZE(capacity);
    CPU_SET_S(static_cast<std::size_t>(cpu), size, set.get());
    return pthread_setaffinity_np(pthread_self(), size, set.get()) == 0;
}

}  // namespace smrbench
