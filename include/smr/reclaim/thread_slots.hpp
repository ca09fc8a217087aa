// A domain's per-thread records, one padded slot per registered thread,
// indexed by the registry's slot numbers.
#pragma once

#include <cstddef>
#include <memory>

#include "smr/core/padded.hpp"
#include "smr/core/thread_registry.hpp"

namespace smr::detail {

/// Slots 0 to capacity - 1, each on lines of its own, and the registry that
/// hands them to threads. A slot is reused by the next thread to register,
/// so what a thread leaves in it must be handed over or reset when it leaves.
template <class Slot>
class thread_slots {
  public:
    explicit thread_slots(std::size_t capacity)
        : registry_(capacity), slots_(std::make_unique<core::padded<Slot>[]>(capacity)) {}

    /// A registered thread's id is in [0, capacity): the one place it
    /// becomes an index. A hook that touches its slot more than once takes
    /// it once: the index is recomputed after every atomic access otherwise.
    [[gnu::always_inline]] Slot& operator[](int tid) noexcept {
        return *slots_[static_cast<std::size_t>(tid)];
    }
    [[gnu::always_inline]] const Slot& operator[](int tid) const noexcept {
        return *slots_[static_cast<std::size_t>(tid)];
    }

    /// One past the highest slot ever taken: scans stop there.
    int scan_limit() const noexcept { return registry_.scan_limit(); }
    core::thread_registry& registry() noexcept { return registry_; }
    const core::thread_registry& registry() const noexcept { return registry_; }

  private:
    core::thread_registry registry_;
    std::unique_ptr<core::padded<Slot>[]> slots_;
};

}  // namespace smr::detail
