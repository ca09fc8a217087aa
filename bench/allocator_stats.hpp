// What the allocator itself says: bytes in use, and how its frees went,
// where it offers a way to ask.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace smrbench {

/// `allocator` is allocator_identity::name. jemalloc: stats.allocated;
/// tcmalloc: generic.current_allocated_bytes; mimalloc: committed bytes
/// (mi_process_info; it has no cheaper allocated-bytes figure); glibc:
/// mallinfo2 in-use bytes. nullopt for allocators without such an API
/// (tbbmalloc) or when the call fails.
std::optional<std::uint64_t> allocator_bytes_in_use(std::string_view allocator);

/// Counters of the allocator's slow path for small blocks, the evidence of
/// remote batch free (Epochs paper, Section 3 and Table 2): a thread cache
/// that overflows is flushed, and its blocks go back to the bins of the
/// arenas that own them, each bin under its lock. jemalloc's (mallctl), summed
/// over every arena and small size class. Monotonic: a trial reports the
/// difference over its measured interval.
struct allocator_counters {
    std::uint64_t tcache_flushes = 0;         ///< thread-cache flushes into a bin
    std::uint64_t bin_lock_acquisitions = 0;  ///< bin locks taken
    std::uint64_t bin_lock_waits = 0;         ///< of those, taken after waiting
    std::uint64_t bin_lock_wait_ns = 0;       ///< time waited for them, summed
};
allocator_counters operator-(const allocator_counters& after, const allocator_counters& before);

/// `allocator`'s counters now (allocator_identity::name), or nullopt where
/// there are none: tcmalloc (gperftools keeps byte gauges, no counts of
/// flushes or lock waits), mimalloc (its release build keeps no free
/// statistics), glibc and tbbmalloc (none), a jemalloc built without
/// statistics.
std::optional<allocator_counters> allocator_counters_now(std::string_view allocator);

}  // namespace smrbench
