#include "allocator_stats.hpp"

#include <dlfcn.h>
#include <malloc.h>

#include <cstddef>
#include <cstdio>

namespace smrbench {
namespace {

template <class Function>
Function* lookup(const char* symbol) {
    return reinterpret_cast<Function*>(dlsym(RTLD_DEFAULT, symbol));
}

using mallctl_fn = int(const char*, void*, std::size_t*, void*, std::size_t);

/// jemalloc caches its statistics: a write to "epoch" refreshes them.
void refresh_jemalloc_stats(mallctl_fn* mallctl) {
    std::uint64_t epoch = 1;
    std::size_t epoch_size = sizeof epoch;
    mallctl("epoch", &epoch, &epoch_size, &epoch, epoch_size);
}

std::optional<std::uint64_t> jemalloc_allocated() {
    auto* mallctl = lookup<mallctl_fn>("mallctl");
    if (mallctl == nullptr) return std::nullopt;
    refresh_jemalloc_stats(mallctl);
    std::size_t allocated = 0;
    std::size_t size = sizeof allocated;
    if (mallctl("stats.allocated", &allocated, &size, nullptr, 0) != 0) return std::nullopt;
    return allocated;
}

/// jemalloc's counters, summed over every arena (MALLCTL_ARENAS_ALL, 4096:
/// destroyed arenas included) and every small size class (bin). nullopt
/// when any is missing: a jemalloc built without statistics.
std::optional<allocator_counters> jemalloc_counters() {
    auto* mallctl = lookup<mallctl_fn>("mallctl");
    if (mallctl == nullptr) return std::nullopt;
    refresh_jemalloc_stats(mallctl);
    unsigned bins = 0;
    std::size_t size = sizeof bins;
    if (mallctl("arenas.nbins", &bins, &size, nullptr, 0) != 0) return std::nullopt;
    allocator_counters out;
    struct field {
        const char* leaf;
        std::uint64_t allocator_counters::*member;
    };
    constexpr field fields[] = {
        {"nflushes", &allocator_counters::tcache_flushes},
        {"mutex.num_ops", &allocator_counters::bin_lock_acquisitions},
        {"mutex.num_wait", &allocator_counters::bin_lock_waits},
        {"mutex.total_wait_time", &allocator_counters::bin_lock_wait_ns},
    };
    for (unsigned bin = 0; bin < bins; ++bin) {
        for (const field& f : fields) {
            char name[96];
            std::snprintf(name, sizeof name, "stats.arenas.4096.bins.%u.%s", bin, f.leaf);
            std::uint64_t value = 0;
            size = sizeof value;
            if (mallctl(name, &value, &size, nullptr, 0) != 0) return std::nullopt;
            out.*f.member += value;
        }
    }
    return out;
}

std::optional<std::uint64_t> tcmalloc_allocated() {
    using property_fn = int(const char*, std::size_t*);
    auto* get = lookup<property_fn>("MallocExtension_GetNumericProperty");
    std::size_t value = 0;
    if (get == nullptr || get("generic.current_allocated_bytes", &value) == 0) return std::nullopt;
    return value;
}

std::optional<std::uint64_t> mimalloc_committed() {
    using info_fn = void(std::size_t*, std::size_t*, std::size_t*, std::size_t*, std::size_t*,
                         std::size_t*, std::size_t*, std::size_t*);
    auto* info = lookup<info_fn>("mi_process_info");
    if (info == nullptr) return std::nullopt;
    std::size_t elapsed, user, system, rss, peak_rss, commit = 0, peak_commit, faults;
    info(&elapsed, &user, &system, &rss, &peak_rss, &commit, &peak_commit, &faults);
    return commit;
}

std::optional<std::uint64_t> glibc_in_use() {
    const struct mallinfo2 info = mallinfo2();
    return static_cast<std::uint64_t>(info.uordblks) + static_cast<std::uint64_t>(info.hblkhd);
}

}  // namespace

std::optional<std::uint64_t> allocator_bytes_in_use(std::string_view allocator) {
    if (allocator == "jemalloc") return jemalloc_allocated();
    if (allocator == "tcmalloc") return tcmalloc_allocated();
    if (allocator == "mimalloc") return mimalloc_committed();
    if (allocator == "glibc") return glibc_in_use();
    return std::nullopt;
}

allocator_counters operator-(const allocator_counters& after, const allocator_counters& before) {
    return {after.tcache_flushes - before.tcache_flushes,
            after.bin_lock_acquisitions - before.bin_lock_acquisitions,
            after.bin_lock_waits - before.bin_lock_waits,
            after.bin_lock_wait_ns - before.bin_lock_wait_ns};
}

std::optional<allocator_counters> allocator_counters_now(std::string_view allocator) {
    if (allocator == "jemalloc") return jemalloc_counters();
    return std::nullopt;
}

}  // namespace smrbench
