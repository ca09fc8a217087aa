// What a trial's threads share: the flags that start and stop them, the
// count of those ready, the first error, and each worker's tally.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <string>
#include <vector>

#include "smr/core/padded.hpp"

namespace smrbench {

/// What one worker adds up; compared with the structure at the end.
struct worker_tally {
    std::int64_t key_sum = 0;        // keys inserted minus keys erased (successful ops)
    std::int64_t size = 0;           // successful inserts minus successful erases
    std::uint64_t measured_ops = 0;  // completed operations in the measured interval
    std::uint64_t failed_ops = 0;    // operations whose allocation failed (--pool-nodes)
    std::uint64_t end_ns = 0;

    // Queues only (DS::is_queue): per-producer FIFO order, as this worker
    // dequeues it.
    int producer = 0;                      // this worker's index, in its items' values
    std::uint64_t enqueued = 0;            // sequence number of its last item (1, 2, ...)
    std::vector<std::uint64_t> last_seen;  // per producer: last sequence number dequeued
    std::string fifo_error;                // the first violation seen, empty if none
};

/// Written by the coordinator (trial_coordinator.cpp), polled by the thread
/// roles. Each flag is read on every operation, so each sits alone.
struct trial_control {
    alignas(smr::core::false_sharing_range) std::atomic<bool> go{false};
    alignas(smr::core::false_sharing_range) std::atomic<bool> stop{false};
    alignas(smr::core::false_sharing_range) std::atomic<std::int64_t> prefilled{0};
    alignas(smr::core::false_sharing_range) std::atomic<int> ready{0};
    alignas(smr::core::false_sharing_range) std::atomic<int> finished{0};  // workers done measuring
    std::mutex error_mutex;
    std::exception_ptr error;

    /// Keeps the first error and ends the trial early.
    void fail(std::exception_ptr e) {
        {
            std::lock_guard lock(error_mutex);
            if (!error) error = e;
        }
        end_early();
    }
    /// Ends any prefill and every thread's loop.
    void end_early() {
        prefilled.store(INT64_MAX / 2, std::memory_order_relaxed);
        stop.store(true, std::memory_order_relaxed);
    }

    /// A role's prefill is done (or it failed): counted by await_prefill.
    void arrive_ready() {
        ready.fetch_add(1, std::memory_order_release);  // pairs with await_prefill's acquire
        ready.notify_all();
    }
    /// Blocks (futex-based, no spinning) until the coordinator says go.
    void wait_for_go() {
        while (!go.load(std::memory_order_acquire)) go.wait(false, std::memory_order_acquire);
    }
    /// A worker has run its --ops: read by the coordinator's deadlock watch.
    void count_finished() { finished.fetch_add(1, std::memory_order_release); }
    /// Sleeps in 1 ms steps until the trial stops (a stalled thread's wait).
    void sleep_until_stop() const;
};

/// A trial's thread slots: the workers, a stalled thread and a spare (the
/// domain's max_threads, and the recorders' per-thread buffers).
inline std::size_t trial_thread_slots(int workers) { return static_cast<std::size_t>(workers) + 2; }

/// The line a prefill that ran out of pool memory ends the trial with.
std::string prefill_pool_exhausted(std::uint64_t pool_nodes, std::int64_t prefilled,
                                   std::int64_t target);

}  // namespace smrbench
