// Per-thread data padded against false sharing.
#pragma once

#include <cstddef>
#include <new>

namespace smr::core {

/// Bytes that keep two threads' data from sharing a cache line. Two lines, not
/// one: Intel's adjacent-line prefetcher pulls pairs of 64-byte lines, so data
/// 64 bytes apart still ping-pongs between cores.
inline constexpr std::size_t false_sharing_range = 128;

/// A T alone on its own cache lines. Arrays of per-thread slots are arrays of
/// padded<slot>, so one thread's writes never invalidate another's line.
template <class T>
struct alignas(false_sharing_range) padded {
    T value{};

    T* operator->() noexcept { return &value; }
    const T* operator->() const noexcept { return &value; }
    T& operator*() noexcept { return value; }
    const T& operator*() const noexcept { return value; }
};

}  // namespace smr::core
