// Per-thread statistics that other threads may read while the owner runs.
#pragma once

#include <atomic>
#include <cstdint>

namespace smr::core {

/// A counter with one writer and any number of readers. add() is a relaxed
/// load and store, not a read-modify-write: no lock prefix on the hot path.
/// Readers (the garbage sampler, the final report) see a recent value.
class owner_counter {
  public:
    void add(std::uint64_t n = 1) noexcept {
        value_.store(value_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
    }
    std::uint64_t get() const noexcept { return value_.load(std::memory_order_relaxed); }
    void reset() noexcept { value_.store(0, std::memory_order_relaxed); }

  private:
    std::atomic<std::uint64_t> value_{0};
};

/// Raises `peak` to at least `value` (lock-free max).
inline void raise_to(std::atomic<std::uint64_t>& peak, std::uint64_t value) noexcept {
    std::uint64_t current = peak.load(std::memory_order_relaxed);
    while (current < value &&
           !peak.compare_exchange_weak(current, value, std::memory_order_relaxed)) {
    }
}

}  // namespace smr::core
