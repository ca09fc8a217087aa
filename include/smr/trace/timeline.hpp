// Per-thread event recording for timeline graphs (Epochs paper, Figures 2-9).
//
// Each thread slot owns a preallocated buffer and appends to it without any
// synchronization; the buffers are read only after the threads have stopped.
// A full buffer stops recording for that thread and says so, rather than
// wrapping (a timeline with a hole in the middle misleads) or allocating on
// the hot path. Recording is off unless a timeline is attached to a domain,
// and then costs one predictable branch per event site.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "smr/core/padded.hpp"

namespace smr::trace {

enum class event_kind : std::uint8_t {
    batch_free,           ///< a safe bag freed at once; value = nodes
    free_call,            ///< one free() call at or above the threshold; value = 1
    epoch_change,         ///< instant: this thread advanced the global epoch; value = new epoch
    token_pass,           ///< instant: token passed; value = receiving slot
    signal_sent,          ///< instant: neutralization signal sent; value = target slot
    neutralized_restart,  ///< instant: this thread was neutralized
    alloc_failure,        ///< instant: bounded pool exhausted
};

inline constexpr std::string_view to_string(event_kind kind) noexcept {
    switch (kind) {
        case event_kind::batch_free:
            return "batch_free";
        case event_kind::free_call:
            return "free_call";
        case event_kind::epoch_change:
            return "epoch_change";
        case event_kind::token_pass:
            return "token_pass";
        case event_kind::signal_sent:
            return "signal_sent";
        case event_kind::neutralized_restart:
            return "neutralized_restart";
        case event_kind::alloc_failure:
            return "alloc_failure";
    }
    return "unknown";
}

/// Times are in now_ticks() units; the writer converts them once, at the end.
struct event {
    std::uint64_t start_ticks;
    std::uint64_t end_ticks;
    std::uint64_t value;
    event_kind kind;
};

class timeline {
  public:
    /// `min_free_ns`: free_call events shorter than this are not recorded
    /// (0 records every call; the paper's Figure 9 used 0.1 ms).
    timeline(std::size_t threads, std::size_t capacity_per_thread, std::uint64_t min_free_ticks)
        : capacity_(capacity_per_thread),
          min_free_ticks_(min_free_ticks),
          buffers_(std::make_unique<core::padded<buffer>[]>(threads)),
          threads_(threads) {
        for (std::size_t i = 0; i < threads; ++i) buffers_[i]->events.reset(new event[capacity_]);
    }

    void record(int tid, event_kind kind, std::uint64_t start, std::uint64_t end,
                std::uint64_t value) noexcept {
        buffer& b = *buffers_[static_cast<std::size_t>(tid)];
        if (b.size == capacity_) {
            b.truncated = true;
            return;
        }
        b.events[b.size++] = event{start, end, value, kind};
    }

    void record_instant(int tid, event_kind kind, std::uint64_t at, std::uint64_t value) noexcept {
        record(tid, kind, at, at, value);
    }

    std::uint64_t min_free_ticks() const noexcept { return min_free_ticks_; }
    std::size_t threads() const noexcept { return threads_; }
    std::size_t capacity() const noexcept { return capacity_; }
    std::size_t size(int tid) const noexcept {
        return buffers_[static_cast<std::size_t>(tid)]->size;
    }
    bool truncated(int tid) const noexcept {
        return buffers_[static_cast<std::size_t>(tid)]->truncated;
    }
    const event* events(int tid) const noexcept {
        return buffers_[static_cast<std::size_t>(tid)]->events.get();
    }

  private:
    struct buffer {
        std::unique_ptr<event[]> events;
        std::size_t size = 0;
        bool truncated = false;
    };

    std::size_t capacity_;
    std::uint64_t min_free_ticks_;
    std::unique_ptr<core::padded<buffer>[]> buffers_;
    std::size_t threads_;
};

/// Each thread's unreclaimed nodes at every epoch it begins (Epochs paper,
/// Figure 4, sums them per epoch). Per-thread vectors (only their thread
/// appends), merged by time when saved: no shared lock, and no limit on the
/// number of epochs.
class garbage_series {
  public:
    struct point {
        std::uint64_t ticks;
        std::uint64_t epoch;
        int thread;
        std::uint64_t garbage;
    };

    explicit garbage_series(std::size_t threads)
        : per_thread_(std::make_unique<core::padded<std::vector<point>>[]>(threads)),
          threads_(threads) {}

    /// Thread `tid` began `epoch` at `ticks` with `garbage` nodes unreclaimed.
    void record(int tid, std::uint64_t ticks, std::uint64_t epoch, std::uint64_t garbage) {
        per_thread_[static_cast<std::size_t>(tid)]->push_back(point{ticks, epoch, tid, garbage});
    }

    /// All points in time order; call after the threads have stopped.
    std::vector<point> merged() const;

  private:
    std::unique_ptr<core::padded<std::vector<point>>[]> per_thread_;
    std::size_t threads_;
};

inline std::vector<garbage_series::point> garbage_series::merged() const {
    std::vector<point> all;
    for (std::size_t i = 0; i < threads_; ++i)
        all.insert(all.end(), per_thread_[i]->begin(), per_thread_[i]->end());
    std::sort(all.begin(), all.end(),
              [](const point& a, const point& b) { return a.ticks < b.ticks; });
    return all;
}

}  // namespace smr::trace
