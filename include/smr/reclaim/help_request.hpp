// What the wait-free protects share (wait-free eras, reclaim/wfe.hpp;
// Crystalline-W, reclaim/crystalline_w.hpp): a thread that cannot finish a
// protect in a bounded number of tries publishes a help request naming the
// source it reads, and any thread that moves the era loads that source on its
// behalf. The request's result is a core::word_pair {pointer, era}, whose
// first word holds help_pending until it is answered; the source travels
// type-erased, with the function that loads it as the requester would.
#pragma once

#include <atomic>
#include <cstdint>
#include <limits>

namespace smr::detail {

/// result.first while a request waits for its pointer.
inline constexpr std::uint64_t help_pending = std::numeric_limits<std::uint64_t>::max();

using source_loader = std::uint64_t (*)(const void* source) noexcept;

template <class T>
std::uint64_t load_source_as(const void* source) noexcept {
    // acquire: pairs with the release (or CAS) that published the node.
    T* p = static_cast<const std::atomic<T*>*>(source)->load(std::memory_order_acquire);
    return reinterpret_cast<std::uintptr_t>(p);
}

}  // namespace smr::detail
