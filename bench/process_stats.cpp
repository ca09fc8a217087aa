#include "process_stats.hpp"

#include <fstream>
#include <string>

namespace smrbench {
namespace {

std::uint64_t status_field_kib(const std::string& field) {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line)) {
        if (line.rfind(field + ":", 0) == 0) {
            return std::stoull(line.substr(field.size() + 1));  // "   1234 kB"
        }
    }
    return 0;
}

}  // namespace

std::uint64_t peak_rss_bytes() { return status_field_kib("VmHWM") * 1024; }
std::uint64_t current_rss_bytes() { return status_field_kib("VmRSS") * 1024; }

bool reset_peak_rss() {
    std::ofstream clear_refs("/proc/self/clear_refs");
    clear_refs << "5";  // "5": reset the peak RSS (Documentation/filesystems/proc.rst)
    clear_refs.flush();
    return static_cast<bool>(clear_refs);
}

}  // namespace smrbench
