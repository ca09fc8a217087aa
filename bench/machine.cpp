#include "machine.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <set>
#include <sstream>
#include <string_view>
#include <thread>
#include <utility>

#include "pinning.hpp"

namespace smrbench {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A file's text without its trailing newline; nullopt if it cannot be read.
std::optional<std::string> read_text(const fs::path& path) {
    std::ifstream file(path);
    if (!file) return std::nullopt;
    std::ostringstream text;
    text << file.rdbuf();
    std::string value = text.str();
    while (!value.empty() && (value.back() == '\n' || value.back() == ' ')) value.pop_back();
    return value;
}

std::optional<long long> to_number(std::string_view text) {
    long long value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc{} || end != text.data() + text.size()) return std::nullopt;
    return value;
}

json or_null(const std::optional<std::string>& value) {
    return value ? json(*value) : json(nullptr);
}

// The value of the first "key : value" line of a /proc file whose key is `key`.
std::optional<std::string> proc_field(const fs::path& path, std::string_view key) {
    std::ifstream file(path);
    for (std::string line; std::getline(file, line);) {
        const std::size_t colon = line.find(':');
        if (colon == std::string::npos) continue;
        std::string_view name(line.data(), colon);
        while (!name.empty() && (name.back() == ' ' || name.back() == '\t')) name.remove_suffix(1);
        if (name != key) continue;
        std::size_t start = colon + 1;
        while (start < line.size() && line[start] == ' ') ++start;
        return line.substr(start);
    }
    return std::nullopt;
}

// The online CPUs, or every cpuN directory when the online list is unreadable.
std::vector<int> online_cpus(const fs::path& cpu_dir) {
    if (const auto text = read_text(cpu_dir / "online")) {
        if (auto cpus = parse_cpu_list(*text)) return *cpus;
    }
    std::vector<int> cpus;
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(cpu_dir, error)) {
        const std::string name = entry.path().filename().string();
        if (name.rfind("cpu", 0) != 0) continue;
        if (const auto number = to_number(std::string_view(name).substr(3))) {
            cpus.push_back(static_cast<int>(*number));
        }
    }
    std::sort(cpus.begin(), cpus.end());
    return cpus;
}

int count_numa_nodes(const fs::path& root) {
    if (const auto text = read_text(root / "sys/devices/system/node/online")) {
        if (const auto nodes = parse_cpu_list(*text)) return static_cast<int>(nodes->size());
    }
    return 1;  // a kernel without NUMA support has one node
}

// cpu0's caches; shared_by counts the CPUs that share each (a per-core L2 says 2 with SMT).
json caches(const fs::path& cpu0) {
    json list = json::array();
    std::error_code error;
    std::vector<fs::path> indexes;
    for (const auto& entry : fs::directory_iterator(cpu0 / "cache", error)) {
        if (entry.path().filename().string().rfind("index", 0) == 0) indexes.push_back(entry);
    }
    std::sort(indexes.begin(), indexes.end());
    for (const fs::path& index : indexes) {
        const auto level = read_text(index / "level");
        const auto size = read_text(index / "size");
        const auto shared = read_text(index / "shared_cpu_list");
        const auto cpus = shared ? parse_cpu_list(*shared) : std::nullopt;
        const auto bytes = size ? parse_cache_size(*size) : std::nullopt;
        list.push_back({{"level", level ? json(to_number(*level).value_or(0)) : json(nullptr)},
                        {"type", or_null(read_text(index / "type"))},
                        {"size_bytes", bytes ? json(*bytes) : json(nullptr)},
                        {"shared_by", cpus ? json(cpus->size()) : json(nullptr)}});
    }
    return list;
}

// Whether a hypervisor is there (the CPU says so), what the firmware calls the system (a
// cloud's or an emulator's name), and the container runtime whose marker file is present.
json virtualization(const fs::path& root) {
    const auto flags = proc_field(root / "proc/cpuinfo", "flags");
    json hypervisor = nullptr;  // null: no x86 flags line to tell
    if (flags) hypervisor = (" " + *flags + " ").find(" hypervisor ") != std::string::npos;
    const auto vendor = read_text(root / "sys/class/dmi/id/sys_vendor");
    const auto product = read_text(root / "sys/class/dmi/id/product_name");
    json system = nullptr;
    if (vendor || product)
        system = vendor.value_or("") + (vendor && product ? " " : "") + product.value_or("");
    json container = nullptr;
    std::error_code error;  // unreadable: no marker
    if (fs::exists(root / ".dockerenv", error)) container = "docker";
    if (fs::exists(root / "run/.containerenv", error)) container = "podman";
    return {{"hypervisor", hypervisor}, {"system", system}, {"container", container}};
}

json load_average(const fs::path& root) {
    const auto text = read_text(root / "proc/loadavg");
    if (!text) return nullptr;
    std::istringstream in(*text);
    double one = 0;
    double five = 0;
    double fifteen = 0;
    if (!(in >> one >> five >> fifteen)) return nullptr;
    return json::array({one, five, fifteen});
}

json memory_bytes(const fs::path& root) {
    const auto total = proc_field(root / "proc/meminfo", "MemTotal");  // "16318784 kB"
    if (!total || total->size() < 3 || total->substr(total->size() - 3) != " kB") return nullptr;
    const auto kib = to_number(std::string_view(*total).substr(0, total->size() - 3));
    return kib ? json(*kib * 1024) : json(nullptr);
}

}  // namespace

std::optional<std::vector<int>> parse_cpu_list(const std::string& text) {
    std::vector<int> cpus;
    std::string_view rest(text);
    while (!rest.empty()) {
        const std::size_t comma = rest.find(',');
        const std::string_view range = rest.substr(0, comma);
        rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
        const std::size_t dash = range.find('-');
        const auto first = to_number(range.substr(0, dash));
        const auto last =
            dash == std::string_view::npos ? first : to_number(range.substr(dash + 1));
        if (!first || !last || *first < 0 || *last < *first) return std::nullopt;
        for (long long cpu = *first; cpu <= *last; ++cpu) cpus.push_back(static_cast<int>(cpu));
    }
    return cpus;
}

std::optional<long long> parse_cache_size(const std::string& text) {
    if (text.empty()) return std::nullopt;
    long long scale = 1;
    std::string_view digits(text);
    switch (text.back()) {
        case 'K':
            scale = 1024;
            break;
        case 'M':
            scale = 1024 * 1024;
            break;
        case 'G':
            scale = 1024LL * 1024 * 1024;
            break;
        default:
            break;
    }
    if (scale != 1) digits.remove_suffix(1);
    const auto value = to_number(digits);
    if (!value) return std::nullopt;
    return *value * scale;
}

json machine_json(const fs::path& root) {
    const fs::path cpu_dir = root / "sys/devices/system/cpu";
    const std::vector<int> cpus = online_cpus(cpu_dir);
    std::set<int> sockets;
    std::set<std::pair<int, int>> cores;
    for (const cpu_location& location : read_topology(cpus, root)) {
        sockets.insert(location.package);
        cores.insert({location.package, location.core});
    }
    const std::size_t threads = cpus.size();
    json machine = {
        {"cpu_model", or_null(proc_field(root / "proc/cpuinfo", "model name"))},
        {"sockets", sockets.size()},
        {"cores", cores.size()},
        {"threads", threads},
        {"threads_per_core", cores.empty() ? 0 : threads / cores.size()},
        {"numa_nodes", count_numa_nodes(root)},
        {"caches", caches(cpu_dir / "cpu0")},
        {"memory_bytes", memory_bytes(root)},
        {"kernel", or_null(read_text(root / "proc/sys/kernel/osrelease"))},
        {"hostname", or_null(read_text(root / "proc/sys/kernel/hostname"))},
        {"virtualization", virtualization(root)},
        {"load_average", load_average(root)},
        {"governor", or_null(read_text(cpu_dir / "cpu0/cpufreq/scaling_governor"))},
    };
    return machine;
}

const json& this_machine_json() {
    static const json machine = [] {
        json object = machine_json("/");
        object["hardware_threads"] = std::thread::hardware_concurrency();
        object["cpus"] = allowed_cpus().size();
        return object;
    }();
    return machine;
}

}  // namespace smrbench
