// Thread slots: which per-thread slots are in use, for any number of threads.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>

#include "smr/core/padded.hpp"

namespace smr::core {

/// Hands out dense thread ids (slot indices) and takes them back, so threads
/// can be created and joined any number of times as long as no more than
/// `capacity` are registered at once. A slot's per-thread reclaimer state
/// outlives the thread that used it: the next thread to claim the slot
/// inherits its limbo bags, so nothing a departing thread retired is lost.
///
/// Progress: acquire() is lock-free (one CAS per slot tried); release() and
/// the queries are wait-free.
class thread_registry {
  public:
    explicit thread_registry(std::size_t capacity)
        : capacity_(capacity), in_use_(std::make_unique<padded<std::atomic<bool>>[]>(capacity)) {
        if (capacity == 0) throw std::invalid_argument("thread_registry: capacity must be > 0");
    }

    /// Claims the lowest free slot. Throws std::length_error when all are taken.
    int acquire() {
        for (std::size_t i = 0; i < capacity_; ++i) {
            bool expected = false;
            // seq_cst: a reclaimer scanning slots (epoch advance, HP scan)
            // must see this claim before it sees anything the new thread
            // does after acquire() returns.
            if (!in_use_[i]->load(std::memory_order_relaxed) &&
                in_use_[i]->compare_exchange_strong(expected, true, std::memory_order_seq_cst)) {
                raise_scan_limit(static_cast<int>(i) + 1);
                return static_cast<int>(i);
            }
        }
        throw std::length_error("thread_registry: all " + std::to_string(capacity_) +
                                " thread slots are in use; construct the domain with a larger "
                                "max_threads");
    }

    /// Gives the slot back. The caller must already have left every operation.
    void release(int tid) noexcept {
        // seq_cst: ordered after the departing thread's last announcement
        // (the reclaimer's on_thread_exit) so scanners never see the slot
        // free while its last operation is still visible as running.
        in_use_[static_cast<std::size_t>(tid)]->store(false, std::memory_order_seq_cst);
    }

    bool in_use(int tid) const noexcept {
        return in_use_[static_cast<std::size_t>(tid)]->load(std::memory_order_acquire);
    }

    /// Whether `tid` names a slot in use: any int, also out of range. For the
    /// checks of a caller's tid (relaxed: it asks about its own claim).
    bool registered(int tid) const noexcept {
        return static_cast<std::size_t>(static_cast<unsigned>(tid)) < capacity_ &&
               in_use_[static_cast<std::size_t>(tid)]->load(std::memory_order_relaxed);
    }

    /// How many slots are in use now.
    std::size_t registered_count() const noexcept {
        std::size_t count = 0;
        for (int i = 0; i < scan_limit(); ++i) count += in_use(i) ? 1u : 0u;
        return count;
    }

    /// One past the highest slot ever claimed: loops over threads stop here,
    /// so a domain sized for 1024 threads but used by 4 scans 4 slots.
    ///
    /// seq_cst, pairing with raise_scan_limit's seq_cst CAS: a thread that
    /// has just claimed a slot raises the limit, announces (seq_cst) and reads
    /// a node. A scanner that unlinked the node (or advanced the epoch) and
    /// then loads the limit either sees the raise or precedes it in S, and
    /// then the new thread's read follows the unlink and cannot return the
    /// node. With an acquire load the scanner could read the old limit after
    /// the new thread's read, skip its slot and free the node it holds.
    int scan_limit() const noexcept { return scan_limit_.load(std::memory_order_seq_cst); }

    std::size_t capacity() const noexcept { return capacity_; }

  private:
    void raise_scan_limit(int limit) noexcept {
        int current = scan_limit_.load(std::memory_order_relaxed);
        while (current < limit &&
               !scan_limit_.compare_exchange_weak(current, limit, std::memory_order_seq_cst)) {
        }
    }

    std::size_t capacity_;
    std::unique_ptr<padded<std::atomic<bool>>[]> in_use_;
    std::atomic<int> scan_limit_{0};
};

}  // namespace smr::core
