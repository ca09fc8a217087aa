// The one lock of the lock-based structures: lazylist's per-node locks, the
// writer lock of the concurrently readable structures (cr_list, cr_hash_set)
// and the lock of lock_list, the lock-based baseline.
//
// Test-and-test-and-set with a bounded spin, then yield. Hart et al. (JPDC
// 2007, Section 4) back off exponentially by busy waiting, on machines with
// a CPU per thread. Here threads outnumber cores in every stress test and in
// the preemption figures, so the holder of a lock may be preempted while
// others wait for it: a waiter spins only briefly (the common case: the
// holder is running and holds the lock for a few dozen to a few hundred
// instructions), then gives up its time slice so a preempted holder can run.
#pragma once

#include <atomic>
#include <thread>

#include "smr/core/compiler.hpp"

namespace smr::ds::detail {

/// A 1-byte lock meeting Lockable (so std::lock_guard and std::scoped_lock
/// take it). Not recursive; unlock() only by the holder.
class spinlock {
  public:
    void lock() noexcept {
        for (;;) {
            if (try_lock()) return;
            int spins = 0;
            while (held_.load(std::memory_order_relaxed)) {  // the "test" part: read-only spin
                if (++spins <= spins_before_yield) {
                    core::cpu_relax();
                } else {
                    std::this_thread::yield();
                    spins = 0;
                }
            }
        }
    }

    // acquire: pairs with unlock()'s release, so the previous holder's writes
    // are visible to us.
    bool try_lock() noexcept { return !held_.exchange(true, std::memory_order_acquire); }

    // release: pairs with lock()'s acquire (publishes the critical section).
    void unlock() noexcept { held_.store(false, std::memory_order_release); }

    /// For quiescent checks (validate) only.
    bool is_locked() const noexcept { return held_.load(std::memory_order_relaxed); }

  private:
    /// About 1-5 microseconds of pause instructions: longer than the critical
    /// sections these locks guard at the sizes the benchmarks use, far shorter
    /// than a scheduler time slice.
    static constexpr int spins_before_yield = 64;

    std::atomic<bool> held_{false};
};

}  // namespace smr::ds::detail
