#include "allocator_stats.hpp"

#include <dlfcn.h>
#include <malloc.h>

#include <cstddef>

namespace smrbench {
namespace {

template <class Function>
Function* lookup(const char* symbol) {
    return reinterpret_cast<Function*>(dlsym(RTLD_DEFAULT, symbol));
}

std::optional<std::uint64_t> jemalloc_allocated() {
    using mallctl_fn = int(const char*, void*, std::size_t*, void*, std::size_t);
    auto* mallctl = lookup<mallctl_fn>("mallctl");
    if (mallctl == nullptr) return std::nullopt;
    std::uint64_t epoch = 1;
    std::size_t epoch_size = sizeof epoch;
    mallctl("epoch", &epoch, &epoch_size, &epoch, epoch_size);  // refresh jemalloc's cached stats
    std::size_t allocated = 0;
    std::size_t size = sizeof allocated;
    if (mallctl("stats.allocated", &allocated, &size, nullptr, 0) != 0) return std::nullopt;
    return allocated;
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

}  // namespace smrbench
