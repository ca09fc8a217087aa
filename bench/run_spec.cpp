#include "run_spec.hpp"

#include <algorithm>

namespace smrbench {

std::int64_t workload_spec::prefill_target() const {
    switch (prefill) {
        case prefill_mode::none:
            return 0;
        case prefill_mode::count:
            return prefill_count;
        case prefill_mode::automatic:
            break;
    }
    const int updates = insert_pct + erase_pct;
    if (updates == 0) return key_range / 2;
    return key_range * insert_pct / updates;
}

std::size_t bench_config::bucket_count() const {
    if (buckets != 0) return static_cast<std::size_t>(buckets);
    return static_cast<std::size_t>(std::max<std::int64_t>(workload.key_range / 2, 1));
}

std::string_view to_string(bench_command command) {
    switch (command) {
        case bench_command::set:
            return "set";
        case bench_command::threadtest:
            return "threadtest";
        case bench_command::layout:
            return "layout";
        case bench_command::stamp:
            return "stamp";
    }
    return "set";
}

std::string to_string(prefill_mode mode, std::int64_t count) {
    switch (mode) {
        case prefill_mode::automatic:
            return "auto";
        case prefill_mode::none:
            return "none";
        case prefill_mode::count:
            return std::to_string(count);
    }
    return "auto";
}

}  // namespace smrbench
